#pragma once
// Checked integer arithmetic for sizes, counts and times (bytes × devices, elements × itemsize,
// picoseconds from bytes and bandwidth, FLOP/s rooflines): a result beyond int64 is an spmd::Error
// naming what was being computed and its operands, never a wrapped value, e.g.
//   element count of shape (1099511627776, 1099511627776): 1099511627776 * 1099511627776 is
//   beyond the largest 64-bit integer 9223372036854775807
// `what` is a string, or a callable returning one (called only on overflow, so a hot path pays
// nothing to describe a shape). Header-only, like support/wide_int.h, so reference/ and
// cost_model/ can use it; it depends on reference/error.h only.

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "reference/error.h"

namespace spmd {

namespace checked_math_detail {

template <class What>
std::string describe(const What& what) {
  if constexpr (std::is_invocable_v<const What&>) {
    return std::string(what());
  } else {
    return std::string(std::string_view(what));
  }
}

template <class What>
[[noreturn]] [[gnu::cold]] void fail_overflow(const What& what, std::int64_t a, char operation,
                                              std::int64_t b) {
  throw Error(fmt::format("{}: {} {} {} is beyond the largest 64-bit integer {}", describe(what),
                          a, operation, b, std::numeric_limits<std::int64_t>::max()));
}

}  // namespace checked_math_detail

// a * b; an Error "WHAT: A * B is beyond the largest 64-bit integer ..." when it overflows.
template <class What>
std::int64_t checked_multiply(std::int64_t a, std::int64_t b, const What& what) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) checked_math_detail::fail_overflow(what, a, '*', b);
  return product;
}

// a + b; an Error "WHAT: A + B is beyond ..." when it overflows.
template <class What>
std::int64_t checked_add(std::int64_t a, std::int64_t b, const What& what) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) checked_math_detail::fail_overflow(what, a, '+', b);
  return sum;
}

// a + b and a * b of non-negative sizes, stopping at the largest 64-bit integer instead of
// overflowing: for estimates where "more than any host" is the answer, not an error.
inline std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<std::int64_t>::max() : sum;
}

inline std::int64_t saturating_multiply(std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? std::numeric_limits<std::int64_t>::max()
                                                : product;
}

// `value` as an int; an Error "WHAT: VALUE is beyond the 32-bit integer range ..." otherwise.
template <class What>
int checked_int(std::int64_t value, const What& what) {
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
    throw Error(fmt::format("{}: {} is beyond the 32-bit integer range [{}, {}]",
                            checked_math_detail::describe(what), value,
                            std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
  }
  return static_cast<int>(value);
}

// ceil(value) as int64 (a roofline's ceil(flops / peak * 1e12) ps); an Error "WHAT: VALUE is
// beyond the largest 64-bit integer ..." when it is NaN or does not fit. The plain cast is
// undefined there: it gave the same step time for 1 FLOP/s as for 100 TFLOP/s.
template <class What>
std::int64_t checked_ceil_to_int64(double value, const What& what) {
  constexpr double kTwoTo63 = 9223372036854775808.0;  // exact in a double
  const double rounded = std::ceil(value);
  if (!(rounded < kTwoTo63 && rounded >= -kTwoTo63)) {
    throw Error(fmt::format("{}: {} is beyond the largest 64-bit integer {}",
                            checked_math_detail::describe(what), value,
                            std::numeric_limits<std::int64_t>::max()));
  }
  return static_cast<std::int64_t>(rounded);
}

}  // namespace spmd
