#pragma once
// Links shared max-min fairly between the flows crossing them (docs/link-sharing.md): every
// transfer is a flow from the moment its step starts until its last byte has left; while flows
// are in flight each has the rate cost_model/fair_share.h gives, recomputed whenever a flow
// starts or ends. A flow arrives its route's latency after its last byte left (as under fifo,
// cut-through). The state advances only at events: one "settle" at the time flows start (one
// for all the steps starting then) and one at the earliest completion, rounded up to the ps.

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "cost_model/fair_share.h"
#include "sim/event_queue.h"
#include "sim/link_step.h"
#include "sim/route_cache.h"

namespace spmd::sim {

class FairLinks {
 public:
  FairLinks(const topology::Topology& topology, EventQueue& events);

  // Starts the step's transfers (those between two devices) as flows now; returns how many.
  // When there are any, the listener hears step_ended once the last has arrived.
  std::size_t start_step(const StepTransfers& step, StepListener& listener, RouteCache& routes);
  // From now on the link carries `bytes_per_s` (a degraded-link fault): the flows in flight are
  // carried up to now at their old rates and shared anew.
  void set_link_bandwidth(int link, std::int64_t bytes_per_s);

 private:
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

  struct Flow {
    std::shared_ptr<const RouteTiming> route;
    WideInt work_left = 0;  // share units, as of updated_ps_
    WideInt rate = 0;       // share units; 0 until the first settle
    std::int64_t finish_ps = kNever;  // when work_left runs out at this rate
    std::int64_t start_ps = 0;
    std::int64_t bytes = 0;
    int from = 0;
    int to = 0;
    std::uint32_t step = 0;  // index into steps_
  };
  struct Step {
    std::shared_ptr<StepListener> listener;
    std::size_t flows_left = 0;
    std::int64_t end_ps = 0;
    bool record = false;
  };

  std::uint32_t open_step(StepListener& listener, bool record);
  void schedule_settle(std::int64_t time_ps);
  void settle();
  void carry_until_now(std::vector<std::uint32_t>& ended);
  void arrive(const Flow& flow, std::vector<std::uint32_t>& ended);
  void share();

  EventQueue& events_;
  cost_model::MaxMinFairShare solver_;
  std::vector<Flow> flows_;  // in flight, in start order
  std::vector<Step> steps_;
  std::vector<std::uint32_t> free_steps_;
  std::int64_t updated_ps_ = 0;  // flows' work_left is as of this time
  std::uint64_t generation_ = 0;  // only the latest scheduled settle runs
  bool settle_pending_ = false;   // a settle is scheduled now
  // Scratch reused by every settle.
  std::vector<std::span<const int>> routes_;
  std::vector<WideInt> rates_;
  std::vector<std::uint32_t> ended_;
};

}  // namespace spmd::sim
