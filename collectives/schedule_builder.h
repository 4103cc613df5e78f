#pragma once
// Helpers for writing schedules: a builder that collects transfers by step (leaving out empty
// ones). Rings (position -> rank) are RingOrder, shared with the reference's orders
// (reference/ring_order.h); the step times the closed forms use are in cost_model/step_time.h.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "collectives/algorithm.h"
#include "collectives/schedule.h"
#include "reference/ring_order.h"

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
  std::int64_t& input_offset(int rank) {
    return schedule_.input_offset[static_cast<std::size_t>(rank)];
  }
  Schedule schedule_;
};

// The shape without its ring: a step source that keeps the ring in its own form (or needs none)
// keeps this, so a cached source holds the ring once.
inline CollectiveShape without_ring(CollectiveShape shape) {
  shape.ring.clear();
  return shape;
}

// Elements per pipeline piece: pipeline_chunk_bytes in whole elements, at least one.
std::int64_t piece_elements(const CollectiveShape& shape);

}  // namespace spmd::collectives
