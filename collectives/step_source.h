#pragma once
// A schedule's steps produced one at a time, for the simulator's timing path. A run holds one
// step's transfers, never the whole list: O(ranks) for every algorithm but direct, whose single
// all-pairs step is O(ranks^2) by nature (it is produced only while it runs, never cached).
//
// Step for step and transfer for transfer, a source gives what build_schedule lists (the
// property in tests/collective_schedules_test.cc checks it for every algorithm, kind and shape).
// The materialized Schedule stays for the data path (collectives::run_schedule_data, the CUDA
// executor), whose size is bounded by the data anyway.
//
// Each algorithm numbers its steps as its builder does before empty ones are dropped ("raw"
// steps); a raw step whose transfers are all empty is not a step of the schedule, so a consumer
// skips it (ScheduleBuilder::build drops it the same way).

#include <cstdint>
#include <vector>

#include "collectives/schedule.h"

namespace spmd::collectives {

class StepSource {
 public:
  virtual ~StepSource() = default;

  virtual std::size_t raw_step_count() const = 0;
  // Replaces `out` with raw step `index`'s transfers in the schedule's order, empty ranges left
  // out; `out` keeps its capacity, so a run reuses one buffer.
  virtual void raw_step(std::size_t index, std::vector<Transfer>& out) const = 0;

  int ranks() const { return ranks_; }
  std::int64_t work_elements() const { return work_elements_; }
  // Schedule::max_received_elements_per_step of the same schedule, without building it.
  std::int64_t max_received_elements_per_step() const { return max_received_; }

 protected:
  StepSource(int ranks, std::int64_t work_elements) : ranks_(ranks), work_elements_(work_elements) {}
  // Set by each source's constructor, from a formula or by walking its steps (received_walk).
  void set_max_received(std::int64_t elements) { max_received_ = elements; }

 private:
  int ranks_;
  std::int64_t work_elements_;
  std::int64_t max_received_ = 0;
};

// Appends `t` unless its range is empty (empty transfers are not part of a schedule).
inline void add_transfer(std::vector<Transfer>& out, const Transfer& t) {
  if (t.end > t.begin) out.push_back(t);
}

// The most elements any one rank receives in one step of `source`, found by producing every step
// once (O(ranks) memory): for the algorithms where a formula would be harder to trust.
std::int64_t received_walk(const StepSource& source);

// The schedule's steps, materialized from a source (empty raw steps left out).
std::vector<Step> materialize_steps(const StepSource& source);

}  // namespace spmd::collectives
