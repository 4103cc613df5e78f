#pragma once
// One device's communication and compute time, summed as the run goes so that a run of millions
// of collectives holds a bounded amount: the time its collectives were in flight (the union of
// its groups' [start, end)), the part of that its compute covered (communication hidden by
// compute) and its compute. Intervals wait in two short lists until nothing can reach before a
// time the device has passed; then everything before that time is folded into the totals.

#include <cstdint>
#include <vector>

#include "sim/intervals.h"

namespace spmd::sim {

class OverlapAccount {
 public:
  void add_busy(Interval interval) { busy_.push_back(interval); }
  void add_compute(Interval interval);

  // Nothing added from now on starts before `settled_ps`: the lists' parts before it are final.
  // Folds them when the lists have grown (amortized O(1) per interval).
  void settle_before(std::int64_t settled_ps);
  // Whether the lists have grown enough for settle_before to fold them (callers skip finding
  // the settle time otherwise: it is on the path of every wait and compute span).
  bool folding_due() const { return busy_.size() + compute_.size() >= fold_at_intervals_; }

  std::int64_t communication_in_flight_ps() const;
  std::int64_t overlapped_communication_ps() const;
  std::int64_t compute_ps() const { return compute_ps_; }

 private:
  void fold_before(std::int64_t settled_ps);

  // Lists shorter than this are left alone: folding them costs more than it saves.
  static constexpr std::size_t kMinFoldAtIntervals = 256;

  std::size_t fold_at_intervals_ = kMinFoldAtIntervals;
  std::vector<Interval> busy_;
  std::vector<Interval> compute_;
  std::int64_t folded_in_flight_ps_ = 0;
  std::int64_t folded_overlapped_ps_ = 0;
  std::int64_t compute_ps_ = 0;
};

}  // namespace spmd::sim
