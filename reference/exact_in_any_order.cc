#include "reference/exact_in_any_order.h"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <vector>

#include "reference/check.h"
#include "reference/scalar_arithmetic.h"

namespace spmd {
namespace {

// What the test needs of a float dtype: its significand precision p (bits, the implicit one
// included), its smallest normal number 2^min_normal_exponent and its largest finite value.
struct FloatFormat {
  int precision_bits;
  int min_normal_exponent;
  double max_finite;
};

FloatFormat float_format(DType dtype) {
  switch (dtype) {
    case DType::float64: return {53, -1022, DBL_MAX};
    case DType::float32: return {24, -126, FLT_MAX};
    case DType::float16: return {11, -14, 65504.0};
    case DType::bfloat16: return {8, -126, std::ldexp(255.0, 120)};  // (2 - 2^-7) * 2^127
    default: break;
  }
  SPMD_UNREACHABLE(fmt::format("float_format of {}, expected a float dtype", dtype_name(dtype)));
}

bool is_negative_zero(double x) { return x == 0 && std::signbit(x); }
bool is_positive_zero(double x) { return x == 0 && !std::signbit(x); }

// e such that 2^e is the lowest set bit of finite nonzero x's significand: x = odd * 2^e.
int lowest_set_bit_exponent(double x) {
  int exponent = 0;
  const double fraction = std::frexp(std::fabs(x), &exponent);  // |x| = fraction * 2^exponent
  auto significand = static_cast<std::uint64_t>(std::ldexp(fraction, DBL_MANT_DIG));
  int e = exponent - DBL_MANT_DIG;
  while ((significand & 1U) == 0) {
    significand >>= 1;
    ++e;
  }
  return e;
}

// The sum test of the header: sum |x| < 2^p * g, finite, g normal; every value finite, not all
// of them -0.0.
bool sum_exact_in_any_order(const FloatFormat& format, std::span<const double> values) {
  if (std::any_of(values.begin(), values.end(), [](double x) { return !std::isfinite(x); })) {
    return false;
  }
  if (!values.empty() && std::all_of(values.begin(), values.end(), is_negative_zero)) {
    return false;
  }
  int granularity_exponent = INT_MAX;  // g = 2^granularity_exponent
  for (double x : values) {
    if (x != 0) granularity_exponent = std::min(granularity_exponent, lowest_set_bit_exponent(x));
  }
  if (granularity_exponent == INT_MAX) return true;  // zeros, not all -0.0: +0.0 in any order
  if (granularity_exponent < format.min_normal_exponent) return false;
  // sum |x| / g, in whole numbers: each |x| / g is an integer, exact as a double below 2^53.
  const auto limit = std::uint64_t{1} << format.precision_bits;
  std::uint64_t multiples_of_g = 0;
  for (double x : values) {
    const double multiple = std::ldexp(std::fabs(x), -granularity_exponent);
    if (multiple >= static_cast<double>(limit)) return false;
    multiples_of_g += static_cast<std::uint64_t>(multiple);
    if (multiples_of_g >= limit) return false;
  }
  const double sum_of_magnitudes =
      std::ldexp(static_cast<double>(multiples_of_g), granularity_exponent);
  return sum_of_magnitudes <= format.max_finite;
}

// Max / min return one operand: any order returns the extreme, unless a NaN is among the values
// (dropped or kept as the platform's max decides) or the extreme is 0 with both signs present.
bool extreme_exact_in_any_order(ReduceOp op, std::span<const double> values) {
  if (values.empty()) return true;
  if (std::any_of(values.begin(), values.end(), [](double x) { return std::isnan(x); })) {
    return false;
  }
  const double extreme = op == ReduceOp::max ? *std::max_element(values.begin(), values.end())
                                             : *std::min_element(values.begin(), values.end());
  if (extreme != 0) return true;
  return !(std::any_of(values.begin(), values.end(), is_negative_zero) &&
           std::any_of(values.begin(), values.end(), is_positive_zero));
}

template <class T>
double as_double(T value) {
  if constexpr (arith::is_half_v<T>) return value.to_float();
  else return static_cast<double>(value);
}

}  // namespace

bool exact_in_any_order(DType dtype, ReduceOp op, std::span<const double> values) {
  if (!is_floating(dtype)) return true;  // wrap-around sums and bool max / min are associative
  const FloatFormat format = float_format(dtype);
  const auto subnormal = [&](double x) {
    return x != 0 && std::fabs(x) < std::ldexp(1.0, format.min_normal_exponent);
  };
  // Some platforms (XLA:CPU) flush subnormal operands to zero: not the same bits everywhere.
  if (std::any_of(values.begin(), values.end(), subnormal)) return false;
  if (op == ReduceOp::sum) return sum_exact_in_any_order(format, values);
  return extreme_exact_in_any_order(op, values);
}

std::optional<std::int64_t> first_element_not_exact_in_any_order(
    std::span<const Array> contributions, ReduceOp op) {
  if (contributions.empty() || !is_floating(contributions.front().dtype())) return std::nullopt;
  const DType dtype = contributions.front().dtype();
  return visit_dtype(dtype, [&](auto tag) -> std::optional<std::int64_t> {
    using T = decltype(tag);
    std::vector<double> values(contributions.size());
    for (std::int64_t e = 0; e < contributions.front().size(); ++e) {
      for (std::size_t r = 0; r < contributions.size(); ++r) {
        values[r] = as_double(contributions[r].template values<T>()[static_cast<std::size_t>(e)]);
      }
      if (!exact_in_any_order(dtype, op, values)) return e;
    }
    return std::nullopt;
  });
}

}  // namespace spmd
