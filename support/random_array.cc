#include "support/random_array.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "support/split_mix64.h"

namespace spmd {
namespace {

// Significand bits of each float dtype (the implicit bit included); 0 for the others.
int significand_bits(DType dtype) {
  switch (dtype) {
    case DType::float64: return 53;
    case DType::float32: return 24;
    case DType::float16: return 11;
    case DType::bfloat16: return 8;
    default: return 0;
  }
}

}  // namespace

Array random_array(DType dtype, const Shape& shape, std::uint64_t seed,
                   RandomArrayOptions options) {
  SplitMix64 rng(seed * 0x2545F4914F6CDD1Dull + 1);
  Array a(dtype, shape);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    auto out = a.template mutable_values<T>();
    for (auto& v : out) {
      if constexpr (std::is_same_v<T, bool>) {
        v = (rng.next() & 1) != 0;
      } else if constexpr (std::is_integral_v<T>) {
        v = static_cast<T>(rng.next());
      } else {
        const int p = significand_bits(dtype);
        double value;
        if (options.zero_in > 0 && rng.next() % static_cast<std::uint64_t>(options.zero_in) == 0) {
          value = -0.0;
        } else if (options.special_in > 0 &&
                   rng.next() % static_cast<std::uint64_t>(options.special_in) == 0) {
          const double specials[] = {std::numeric_limits<double>::quiet_NaN(),
                                     std::numeric_limits<double>::infinity(),
                                     -std::numeric_limits<double>::infinity()};
          value = specials[rng.next() % 3];
        } else {
          const std::int64_t limit = (std::int64_t{1} << std::min(p, 62)) - 1;
          const auto m = static_cast<double>(rng.in_range(-limit, limit));
          const int k = static_cast<int>(rng.in_range(-12, options.max_exponent));
          value = std::ldexp(m, k - p);
        }
        if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
          v = T::from_float(static_cast<float>(value));  // exact: the value fits the dtype
        } else {
          v = static_cast<T>(value);
        }
      }
    }
  });
  return a;
}

std::uint64_t device_seed(std::uint64_t seed, int device) {
  return seed + 0x9E37ull * static_cast<std::uint64_t>(device + 1);
}

std::vector<Array> random_per_device(DType dtype, const Shape& shape, int devices,
                                     std::uint64_t seed, RandomArrayOptions options) {
  std::vector<Array> arrays;
  for (int d = 0; d < devices; ++d) {
    arrays.push_back(random_array(dtype, shape, device_seed(seed, d), options));
  }
  return arrays;
}

}  // namespace spmd
