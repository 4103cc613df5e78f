#pragma once
// Random array contents that are the same on every platform and in every process for the same
// seed: the property tests (testing/generators.h) and the differential tests of the real backends
// (backends/differential) draw their data here, so a failing case can be rebuilt from its seed.

#include <cstdint>
#include <vector>

#include "reference/array.h"

namespace spmd {

struct RandomArrayOptions {
  int zero_in = 16;       // about one element in zero_in is -0.0 (floats; at most 65536; 0: none)
  int special_in = 0;     // if > 0, about one element in special_in is NaN, +inf or -inf (floats;
                          // at most 65536)
  int max_exponent = 12;  // floats: |value| < 2^max_exponent (0: below 1, so a sum over n
                          // devices stays below n, finite even in float16 up to 65504 devices);
                          // in [-12, 15]
};

// Floats are m * 2^(k - p) with an integer significand |m| < 2^p (p = the dtype's significand
// bits) and k in [-12, max_exponent], so every value is exact in its dtype and exponents spread,
// and a different order of additions gives different bits; ints and bool are uniform bit patterns
// (full range, so sums wrap). "About one in n": exactly for n a power of two, within 2^-16
// otherwise. Each element is a hash of (seed, its index) alone (support/random_array.cc), so the
// bits do not depend on the machine or the array's length, and float32 arrays are made at memory
// speed (vectorized, no library call per element).
Array random_array(DType dtype, const Shape& shape, std::uint64_t seed,
                   RandomArrayOptions options = {});

// The same elements as random_array, made when they are read (reference/array_storage.h): a
// reader that takes them a range at a time, as a collective's data path does, never holds them
// all, and the array costs no memory until then. The options are checked here, as random_array
// checks them.
Array lazy_random_array(DType dtype, const Shape& shape, std::uint64_t seed,
                        RandomArrayOptions options = {});

// The seed random_per_device gives device `device` (0-based) for a per-case `seed`, so that a
// single device's data can be rebuilt without the others'.
std::uint64_t device_seed(std::uint64_t seed, int device);

// One array per device, device d's from device_seed(seed, d).
std::vector<Array> random_per_device(DType dtype, const Shape& shape, int devices,
                                     std::uint64_t seed, RandomArrayOptions options = {});
// The same with lazy_random_array: `spmdsim perf`'s inputs.
std::vector<Array> lazy_random_per_device(DType dtype, const Shape& shape, int devices,
                                          std::uint64_t seed, RandomArrayOptions options = {});

}  // namespace spmd
