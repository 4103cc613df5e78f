#pragma once
// Helpers for writing schedules: a builder that collects transfers by step (leaving out empty
// ones), and rings given as position -> rank. The step times the closed forms use are in
// cost_model/step_time.h.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "collectives/algorithm.h"
#include "collectives/schedule.h"

namespace spmd::collectives {

class ScheduleBuilder {
 public:
  ScheduleBuilder(std::string algorithm, const CollectiveShape& shape, std::int64_t input_elements,
                  std::int64_t work_elements, WorkFill fill);

  // Every rank's input at `offset` in work (-1: not copied) and result range.
  void set_input_offset(int rank, std::int64_t offset) { input_offset(rank) = offset; }
  void set_result(int rank, std::int64_t begin, std::int64_t end);
  // Adds a transfer to step `step` (steps are created as needed); empty ranges are left out.
  void add(std::size_t step, const Transfer& transfer);
  // The schedule, without steps that ended up empty.
  Schedule build();

 private:
  std::int64_t& input_offset(int rank) { return schedule_.input_offset[static_cast<std::size_t>(rank)]; }
  Schedule schedule_;
};

// Ring position -> rank, from shape.ring (empty: 0..n-1); positions are taken mod n.
class RingOrder {
 public:
  RingOrder(const std::vector<int>& ring, int n);
  int rank_at(std::int64_t position) const;
  int position_of(int rank) const { return positions_[static_cast<std::size_t>(rank)]; }
  int size() const { return static_cast<int>(ranks_.size()); }

 private:
  std::vector<int> ranks_, positions_;
};

// Elements per pipeline piece: pipeline_chunk_bytes in whole elements, at least one.
std::int64_t piece_elements(const CollectiveShape& shape);

}  // namespace spmd::collectives
