#pragma once
// One arithmetic operation on one element, rounded as each dtype rounds it: float32 / float64 are
// native IEEE operations; float16 / bfloat16 compute in float and round once to nearest even;
// integers wrap (two's complement); bool add is OR and mul is AND, as NumPy and XLA PRED do.
// Every reduction in the project goes through these, so their rounding is defined in one place.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "reference/half_float.h"
#include "reference/subnormal_bits.h"

namespace spmd::arith {

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

template <class T>
T from_float(float value) {
  if constexpr (is_half_v<T>) return T::from_float(value);
  else return static_cast<T>(value);
}

template <class T>
T add(T a, T b) {
  if constexpr (is_half_v<T>) {
    return T::from_float(a.to_float() + b.to_float());
  } else if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <class T>
T sub(T a, T b) {
  if constexpr (is_half_v<T>) {
    return T::from_float(a.to_float() - b.to_float());
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}

template <class T>
T mul(T a, T b) {
  if constexpr (is_half_v<T>) {
    return T::from_float(a.to_float() * b.to_float());
  } else if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    // Promote to at least unsigned int so that uint8 * uint8 cannot overflow a signed int.
    using Wide = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return static_cast<T>(static_cast<U>(static_cast<Wide>(static_cast<U>(a)) *
                                         static_cast<Wide>(static_cast<U>(b))));
  } else {
    return a * b;
  }
}

template <class T>
T neg(T a) {
  if constexpr (is_half_v<T>) {
    return T{static_cast<std::uint16_t>(a.bits ^ 0x8000u)};  // sign flip, exact (NaN too)
  } else if constexpr (std::is_integral_v<T>) {
    return sub(T{0}, a);
  } else {
    return -a;
  }
}

template <class T>
bool is_nan(T value) {
  if constexpr (is_half_v<T>) return std::isnan(value.to_float());
  else if constexpr (std::is_floating_point_v<T>) return std::isnan(value);
  else return false;
}

// A subnormal becomes a zero of its sign for the types that XLA:CPU computes with denormals
// flushed (FloatNumerics::flush_subnormals): float32, float64 and bfloat16, whose exponent range
// is float32's. float16 and the integer types are returned unchanged. The bits are read by
// reference/subnormal_bits.h, which the CUDA kernels share.
template <class T>
T flush_subnormal(T value) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    return T{subnormal_bits::flushed_bfloat16(value.bits)};
  } else if constexpr (std::is_floating_point_v<T>) {
    return subnormal_bits::flushed(value);
  } else {
    return value;
  }
}

// `op` with its operands and result flushed when subnormal (FloatNumerics::flush_subnormals) if
// kFlush: a compile-time choice, so that a fold's inner loop has no branch.
template <class T, bool kFlush, class Op>
auto flushing_if(Op op) {
  return [op](T a, T b) {
    if constexpr (kFlush) return flush_subnormal(op(flush_subnormal(a), flush_subnormal(b)));
    else return op(a, b);
  };
}

template <class T>
T max_identity();
template <class T>
T min_identity();

// XLA:CPU's max / min: std::max(acc, x) and std::min(acc, x) on the stored values, folded from
// the identity, so a NaN x is dropped (NaN < anything is false) and ties keep the accumulator
// (+0 vs -0 stays as is). A fold without the identity (a tree) can meet a NaN accumulator: it is
// dropped too, and two NaNs give the identity, so that NaN is dropped in every order.
template <class T>
T max(T acc, T x) {
  if (is_nan(x)) return is_nan(acc) ? max_identity<T>() : acc;
  if (is_nan(acc)) return x;
  if constexpr (is_half_v<T>) return (acc.to_float() < x.to_float()) ? x : acc;
  else return std::max(acc, x);
}

template <class T>
T min(T acc, T x) {
  if (is_nan(x)) return is_nan(acc) ? min_identity<T>() : acc;
  if (is_nan(acc)) return x;
  if constexpr (is_half_v<T>) return (x.to_float() < acc.to_float()) ? x : acc;
  else return std::min(acc, x);
}

// Identities: +0 for sums; -inf / lowest for max; +inf / highest for min; false / true for bool.
template <class T>
T sum_identity() {
  if constexpr (is_half_v<T>) return T{0};
  else return T{0};
}

template <class T>
T max_identity() {
  if constexpr (is_half_v<T>) return T::from_float(-std::numeric_limits<float>::infinity());
  else if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
  else return std::numeric_limits<T>::lowest();
}

template <class T>
T min_identity() {
  if constexpr (is_half_v<T>) return T::from_float(std::numeric_limits<float>::infinity());
  else if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
  else return std::numeric_limits<T>::max();
}

}  // namespace spmd::arith
