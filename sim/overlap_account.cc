#include "sim/overlap_account.h"

#include <algorithm>

namespace spmd::sim {

namespace {

// The parts of sorted, disjoint `intervals` before `time_ps` (returned) and from it on (kept).
std::vector<Interval> split_before(std::vector<Interval>& intervals, std::int64_t time_ps) {
  std::vector<Interval> before;
  std::vector<Interval> after;
  for (const Interval& i : intervals) {
    if (i.first < time_ps) before.emplace_back(i.first, std::min(i.second, time_ps));
    if (i.second > time_ps) after.emplace_back(std::max(i.first, time_ps), i.second);
  }
  intervals = std::move(after);
  return before;
}

}  // namespace

void OverlapAccount::add_compute(Interval interval) {
  compute_ps_ += interval.second - interval.first;
  compute_.push_back(interval);
}

void OverlapAccount::settle_before(std::int64_t settled_ps) {
  if (!folding_due()) return;
  fold_before(settled_ps);
  // What could not be folded yet (a collective still in flight from long ago) waits for lists
  // twice as long, so folding stays amortized O(1) per interval.
  fold_at_intervals_ = std::max(kMinFoldAtIntervals, 2 * (busy_.size() + compute_.size()));
}

void OverlapAccount::fold_before(std::int64_t settled_ps) {
  busy_ = merged(std::move(busy_));
  compute_ = merged(std::move(compute_));
  const std::vector<Interval> busy = split_before(busy_, settled_ps);
  const std::vector<Interval> compute = split_before(compute_, settled_ps);
  folded_in_flight_ps_ += total_length(busy);
  folded_overlapped_ps_ += overlap_length(busy, compute);
}

std::int64_t OverlapAccount::communication_in_flight_ps() const {
  return folded_in_flight_ps_ + total_length(merged(busy_));
}

std::int64_t OverlapAccount::overlapped_communication_ps() const {
  return folded_overlapped_ps_ + overlap_length(merged(busy_), merged(compute_));
}

}  // namespace spmd::sim
