#pragma once
// What a schedule run hands the links (sim/link_state.h) and hears back: one bulk-synchronous
// step's transfers, all leaving at the same moment, and when they arrive.

#include <cstdint>
#include <memory>
#include <span>

#include "collectives/schedule.h"

namespace spmd::sim {

struct StepTransfers {
  std::span<const collectives::Transfer> transfers;
  std::span<const int> devices;  // group rank -> device id
  std::int64_t element_bytes = 0;
  bool record = false;  // tell the listener each transfer's times (traces)
};

class StepListener {
 public:
  // A transfer's times, for steps sent with `record`.
  virtual void transfer_arrived(int from, int to, std::int64_t bytes, std::int64_t start_ps,
                                std::int64_t arrival_ps) = 0;
  // The step's last arrival, when the links could not tell it at once: called from an event,
  // at or before `end_ps`.
  virtual void step_ended(std::int64_t end_ps) = 0;
  // Keeps the listener alive while its flows are in flight.
  virtual std::shared_ptr<StepListener> keep_alive() = 0;

 protected:
  ~StepListener() = default;
};

}  // namespace spmd::sim
