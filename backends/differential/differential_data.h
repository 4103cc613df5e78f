#pragma once
// What the differential tests of the real backends (backends/mpi, backends/gloo) share: each
// rank's random contribution, the element counts every test covers, and the first element where a
// library's bits differ from the reference's.

#include <cstdint>
#include <string>
#include <vector>

#include "reference/array.h"

namespace spmd::differential {

// Rank `rank`'s contribution: `count` random elements of `dtype`, the same in every process for
// the same (seed, rank). Floats are m * 2^k with k spread over [-12, 12], so a different order of
// additions gives different bits; ints cover their full range, so sums wrap
// (support/random_array.h).
Array contribution(DType dtype, std::int64_t count, std::uint64_t seed, int rank);
std::vector<Array> contributions(DType dtype, std::int64_t count, std::uint64_t seed, int ranks);

// Element counts for a group of `ranks`: every count from 1 to ranks (below the group size Open
// MPI's ring and Rabenseifner fall back to other algorithms), small and odd sizes, and
// 2^20 + 1 (at least 1 Mi elements, divisible by no group size from 2 to 8).
std::vector<std::int64_t> element_counts(int ranks);
inline constexpr std::int64_t kLargestCount = (std::int64_t{1} << 20) + 1;

// Empty when `actual` and `expected` have the same dtype, shape and bits; otherwise one line
// naming the first differing element and both values.
std::string bitwise_difference(const Array& actual, const Array& expected);

// A 64-bit digest of an array's type and bits, equal for arrays that bitwise_difference finds
// equal. Ranks of one program compare digests instead of moving their results: two different
// results share one with a chance of about 2^-64, and a mismatch is then told by the full
// comparison.
std::uint64_t bits_digest(const Array& array);

}  // namespace spmd::differential
