#include "reference/elementwise.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <limits>

#include "reference/scalar_arithmetic.h"

namespace spmd {
namespace {

// Row-major strides of `shape` in elements, with stride 0 on broadcast dimensions of the
// output shape `out` (shape right-aligned against out as NumPy aligns it).
std::vector<std::int64_t> broadcast_strides(const Shape& shape, const Shape& out) {
  std::vector<std::int64_t> strides(out.size(), 0);
  std::int64_t stride = 1;
  const std::size_t offset = out.size() - shape.size();
  for (std::size_t d = shape.size(); d-- > 0;) {
    strides[offset + d] = shape[d] == 1 ? 0 : stride;
    stride *= shape[d];
  }
  return strides;
}

template <class T, class Op>
Array binary(const Array& a, const Array& b, Op op) {
  const Shape out_shape = broadcast_shapes(a.shape(), b.shape());
  Array out(a.dtype(), out_shape);
  auto x = a.values<T>();
  auto y = b.values<T>();
  auto z = out.mutable_values<T>();
  if (a.shape() == b.shape()) {
    for (std::size_t i = 0; i < z.size(); ++i) z[i] = op(x[i], y[i]);
  } else {
    const auto sa = broadcast_strides(a.shape(), out_shape);
    const auto sb = broadcast_strides(b.shape(), out_shape);
    std::vector<std::int64_t> index(out_shape.size(), 0);
    std::int64_t ia = 0, ib = 0;
    for (std::size_t i = 0; i < z.size(); ++i) {
      z[i] = op(x[static_cast<std::size_t>(ia)], y[static_cast<std::size_t>(ib)]);
      for (std::size_t d = out_shape.size(); d-- > 0;) {  // odometer increment
        ++index[d];
        ia += sa[d];
        ib += sb[d];
        if (index[d] < out_shape[d]) break;
        ia -= sa[d] * out_shape[d];
        ib -= sb[d] * out_shape[d];
        index[d] = 0;
      }
    }
  }
  return out.with_varying_axes(a.varying_axes() | b.varying_axes());
}

void check_same_dtype(const char* op, const Array& a, const Array& b) {
  if (a.dtype() != b.dtype()) {
    throw Error(std::string(op) + ": operand dtypes differ: " + a.type_string() + " and " +
                b.type_string() + ", expected the same dtype");
  }
}

// float64 -> float rounded to odd, so that a second rounding to float16 / bfloat16 is correct.
float to_float_round_to_odd(double value) {
  float nearest = static_cast<float>(value);
  if (std::isnan(value) || static_cast<double>(nearest) == value || std::isinf(nearest)) {
    return nearest;
  }
  float toward_zero = std::fabs(static_cast<double>(nearest)) > std::fabs(value)
                          ? std::nextafter(nearest, 0.0f)
                          : nearest;
  auto bits = std::bit_cast<std::uint32_t>(toward_zero);
  return std::bit_cast<float>(bits | 1u);
}

template <class To, class From>
To convert_one(From value) {
  constexpr bool to_half = arith::is_half_v<To>;
  constexpr bool from_half = arith::is_half_v<From>;
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else if constexpr (from_half) {
    return convert_one<To>(value.to_float());
  } else if constexpr (std::is_same_v<To, bool>) {
    return value != From{0};
  } else if constexpr (to_half) {
    if constexpr (std::is_same_v<From, float>) return To::from_float(value);
    else return To::from_float(to_float_round_to_odd(static_cast<double>(value)));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (std::isnan(value)) return To{0};
    const From truncated = std::trunc(value);
    if (truncated <= static_cast<From>(std::numeric_limits<To>::lowest())) {
      return std::numeric_limits<To>::lowest();
    }
    if (truncated >= static_cast<From>(std::numeric_limits<To>::max())) {
      return std::numeric_limits<To>::max();
    }
    return static_cast<To>(truncated);
  } else if constexpr (std::is_integral_v<To> && std::is_integral_v<From>) {
    using U = std::make_unsigned_t<To>;
    return static_cast<To>(static_cast<U>(value));  // wraps, as C's conversion does modulo 2^n
  } else {
    return static_cast<To>(value);
  }
}

}  // namespace

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw Error(fmt::format("operands could not be broadcast together with shapes {} {}",
                              shape_to_string(a), shape_to_string(b)));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {

enum class BinaryOp { add, sub, mul };

template <class T>
T apply(BinaryOp op, T x, T y) {
  switch (op) {
    case BinaryOp::add: return arith::add(x, y);
    case BinaryOp::sub: return arith::sub(x, y);
    case BinaryOp::mul: return arith::mul(x, y);
  }
  return x;
}

Array convert_values(const Array& a, DType dtype);

// One binary operation on every element pair. bfloat16 is computed as float32 (flushed there, as
// XLA:CPU's FloatNormalization computes it) and rounded once; float16 needs no flush (its
// subnormals are normal in float32) and computes through arith, which rounds once as well.
template <class T>
Array arithmetic(const Array& a, const Array& b, BinaryOp op, const FloatNumerics& numerics) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    const Array wide = arithmetic<float>(convert_values(a, DType::float32),
                                         convert_values(b, DType::float32), op, numerics);
    const Array rounded = convert_values(wide, DType::bfloat16);
    return numerics.bf16_excess_precision ? rounded.with_unrounded_f32(wide) : rounded;
  } else {
    if (numerics.flush_subnormals) {  // a no-op for float16 and the integers (flush_subnormal)
      return binary<T>(a, b,
                       arith::flushing_if<T, true>([op](T x, T y) { return apply(op, x, y); }));
    }
    return binary<T>(a, b, [op](T x, T y) { return apply(op, x, y); });
  }
}

Array binary_op(const char* name, BinaryOp op, const Array& a, const Array& b,
                const FloatNumerics& numerics) {
  check_same_dtype(name, a, b);
  return visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return arithmetic<T>(a, b, op, numerics);
  });
}

}  // namespace

Array add(const Array& a, const Array& b, const FloatNumerics& numerics) {
  return binary_op("add", BinaryOp::add, a, b, numerics);
}

Array sub(const Array& a, const Array& b, const FloatNumerics& numerics) {
  if (a.dtype() == DType::bool_ && b.dtype() == DType::bool_) {
    throw Error(
        "sub: numpy boolean subtract, the `-` operator, is not supported for bool "
        "operands, expected a numeric dtype");
  }
  return binary_op("sub", BinaryOp::sub, a, b, numerics);
}

Array mul(const Array& a, const Array& b, const FloatNumerics& numerics) {
  return binary_op("mul", BinaryOp::mul, a, b, numerics);
}

Array neg(const Array& a) {
  if (a.dtype() == DType::bool_) {
    throw Error(
        "neg: the numpy boolean negative, the `-` operator, is not supported for bool, "
        "expected a numeric dtype");
  }
  return visit_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Array out(a.dtype(), a.shape());
    auto x = a.values<T>();
    auto z = out.mutable_values<T>();
    for (std::size_t i = 0; i < z.size(); ++i) z[i] = arith::neg(x[i]);
    return out.with_varying_axes(a.varying_axes());
  });
}

namespace {

Array convert_values(const Array& a, DType dtype) {
  if (a.dtype() == dtype) return a;
  return visit_dtype(a.dtype(), [&](auto from_tag) {
    using From = decltype(from_tag);
    return visit_dtype(dtype, [&](auto to_tag) {
      using To = decltype(to_tag);
      Array out(dtype, a.shape());
      auto x = a.values<From>();
      auto z = out.mutable_values<To>();
      for (std::size_t i = 0; i < z.size(); ++i) z[i] = convert_one<To, From>(x[i]);
      return out.with_varying_axes(a.varying_axes());
    });
  });
}

}  // namespace

Array convert(const Array& a, DType dtype) {
  if (a.dtype() == dtype) return a;
  if (const Array* unrounded = a.unrounded_f32(); unrounded != nullptr && dtype == DType::float32) {
    return unrounded->with_varying_axes(a.varying_axes());
  }
  return convert_values(a, dtype);
}

}  // namespace spmd
