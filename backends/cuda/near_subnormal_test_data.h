#pragma once
// Test data for the CUDA backend's flushing of subnormals (XLA:CPU's numerics): shared by
// cuda_schedule_test and cuda_backend_test.

#include <cmath>
#include <cstdint>
#include <vector>

#include "reference/array.h"
#include "reference/elementwise.h"
#include "support/random_array.h"

namespace spmd::cuda {

// Values around `dtype`'s smallest normal (float32 and bfloat16 share its exponent range, float64
// has its own): most are subnormal and some sums leave the range, so reductions meet subnormal
// operands and results, which XLA:CPU's numerics flush and IEEE's keep.
inline std::vector<Array> near_subnormal_per_device(DType dtype, std::int64_t count, int ranks,
                                                    std::uint64_t seed) {
  const int smallest_normal_exponent = dtype == DType::float64 ? -1022 : -126;
  std::vector<Array> arrays;
  for (const Array& source :
       random_per_device(DType::float64, {count}, ranks, seed, {.max_exponent = 2})) {
    std::vector<double> values(source.values<double>().begin(), source.values<double>().end());
    for (double& value : values) value = std::ldexp(value, smallest_normal_exponent);
    arrays.push_back(convert(Array::from_values<double>({count}, values), dtype));
  }
  return arrays;
}

}  // namespace spmd::cuda
