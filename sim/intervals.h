#pragma once
// Time intervals [start, end) in picoseconds: their union and the length two unions share. The
// cost log uses them for the communication a device's compute hid (its collectives in flight
// intersected with its compute spans).

#include <cstdint>
#include <utility>
#include <vector>

namespace spmd::sim {

using Interval = std::pair<std::int64_t, std::int64_t>;  // [first, second), first <= second

// The union as sorted, disjoint, non-empty intervals.
std::vector<Interval> merged(std::vector<Interval> intervals);
// Total length of sorted, disjoint intervals.
std::int64_t total_length(const std::vector<Interval>& intervals);
// Length of the intersection of two sorted, disjoint lists.
std::int64_t overlap_length(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace spmd::sim
