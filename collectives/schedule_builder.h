#pragma once
// Helpers for writing schedules: a builder that collects transfers by step (leaving out empty
// ones) and the uniform-link time of one step. Rings (position -> rank) are RingOrder, shared
// with the reference's orders (reference/ring_order.h).

#include <algorithm>
#include <cstdint>
#include <vector>

#include "collectives/algorithm.h"
#include "collectives/schedule.h"
#include "reference/ring_order.h"
#include "topology/link_time.h"

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

// One step on uniform links: latency plus the largest message's serialization (0 if none).
inline std::int64_t step_time_ps(std::int64_t largest_bytes, std::int64_t latency_ps,
                                 std::int64_t bandwidth_bytes_per_s) {
  return largest_bytes > 0
             ? topology::transfer_time_ps(largest_bytes, latency_ps, bandwidth_bytes_per_s)
             : 0;
}

// Sum of step_time_ps over steps given by their largest message in bytes.
std::int64_t steps_time_ps(const std::vector<std::int64_t>& largest_bytes_per_step,
                           std::int64_t latency_ps, std::int64_t bandwidth_bytes_per_s);

// Elements per pipeline piece: pipeline_chunk_bytes in whole elements, at least one.
std::int64_t piece_elements(const CollectiveShape& shape);

}  // namespace spmd::collectives
