#include "sim/fair_links.h"

#include <fmt/format.h>

#include <algorithm>

#include "reference/check.h"

namespace spmd::sim {
namespace {

std::vector<std::int64_t> link_bandwidths(const topology::Topology& topology) {
  std::vector<std::int64_t> bandwidths;
  for (const topology::Link& link : topology.links()) {
    bandwidths.push_back(link.spec.bandwidth_bytes_per_s);
  }
  return bandwidths;
}

}  // namespace

FairLinks::FairLinks(const topology::Topology& topology, EventQueue& events)
    : events_(events), solver_(link_bandwidths(topology)) {}

std::size_t FairLinks::start_step(const StepTransfers& step, StepListener& listener,
                                  RouteCache& routes) {
  const std::int64_t now = events_.now_ps();
  std::uint32_t index = 0;
  std::size_t started = 0;
  collectives::for_each_message(
      step.transfers, [&](const collectives::Transfer& t, std::int64_t elements) {
        const int from = step.devices[static_cast<std::size_t>(t.source)];
        const int to = step.devices[static_cast<std::size_t>(t.destination)];
        if (from == to) return;
        if (started == 0) index = open_step(listener, step.record);
        Flow flow;
        flow.route = routes.route(from, to);
        flow.bytes = elements * step.element_bytes;
        flow.work_left = cost_model::share_work(flow.bytes);
        flow.finish_ps = flow.bytes == 0 ? now : kNever;  // nothing to carry: done at the settle
        flow.start_ps = now;
        flow.from = from;
        flow.to = to;
        flow.step = index;
        flows_.push_back(std::move(flow));
        ++started;
      });
  if (started == 0) return 0;
  steps_[index].flows_left = started;
  // One settle for every step starting now: the rates change once, when all have started.
  if (!settle_pending_) {
    schedule_settle(now);
    settle_pending_ = true;
  }
  return started;
}

std::uint32_t FairLinks::open_step(StepListener& listener, bool record) {
  Step step{listener.keep_alive(), 0, events_.now_ps(), record};
  if (free_steps_.empty()) {
    steps_.push_back(std::move(step));
    return static_cast<std::uint32_t>(steps_.size() - 1);
  }
  const std::uint32_t index = free_steps_.back();
  free_steps_.pop_back();
  steps_[index] = std::move(step);
  return index;
}

void FairLinks::set_link_bandwidth(int link, std::int64_t bytes_per_s) {
  // The settle carries every flow up to now at the old rates before sharing with the new one.
  solver_.set_bandwidth(link, bytes_per_s);
  if (!flows_.empty() || settle_pending_) {
    schedule_settle(events_.now_ps());
    settle_pending_ = true;
  }
}

// A new settle makes every settle scheduled before it stale (its rates would be out of date).
void FairLinks::schedule_settle(std::int64_t time_ps) {
  ++generation_;
  events_.schedule(time_ps, [this, generation = generation_] {
    if (generation == generation_) settle();
  });
}

// Brings every flow up to now, lets those done arrive, gives the rest new rates and schedules
// the next completion. Steps whose last flow arrived hear of it last, once the state is whole.
void FairLinks::settle() {
  settle_pending_ = false;
  ended_.clear();
  carry_until_now(ended_);
  share();
  for (std::uint32_t index : ended_) {
    Step& step = steps_[index];
    const std::shared_ptr<StepListener> listener = std::move(step.listener);
    free_steps_.push_back(index);
    listener->step_ended(step.end_ps);
  }
}

// The work each flow carried since updated_ps_ at its rate; flows whose work ran out arrive.
void FairLinks::carry_until_now(std::vector<std::uint32_t>& ended) {
  const std::int64_t now = events_.now_ps();
  const std::int64_t elapsed_ps = now - updated_ps_;
  std::size_t kept = 0;
  for (Flow& flow : flows_) {
    if (flow.finish_ps <= now) {
      arrive(flow, ended);
      continue;
    }
    // rate * elapsed < work_left here (the flow is not done), so the product cannot overflow.
    flow.work_left -= flow.rate * elapsed_ps;
    if (&flows_[kept] != &flow) flows_[kept] = std::move(flow);
    ++kept;
  }
  flows_.resize(kept);
  updated_ps_ = now;
}

void FairLinks::arrive(const Flow& flow, std::vector<std::uint32_t>& ended) {
  const std::int64_t arrival_ps = events_.now_ps() + flow.route->latency_ps;
  Step& step = steps_[flow.step];
  step.end_ps = std::max(step.end_ps, arrival_ps);
  if (step.record) {
    step.listener->transfer_arrived(flow.from, flow.to, flow.bytes, flow.start_ps, arrival_ps);
  }
  if (--step.flows_left == 0) ended.push_back(flow.step);
}

// New max-min rates for the flows in flight, and a settle at the first one's completion.
void FairLinks::share() {
  if (flows_.empty()) return;
  routes_.clear();
  for (const Flow& flow : flows_) routes_.emplace_back(flow.route->links);
  rates_.resize(flows_.size());
  solver_.solve(routes_, rates_);
  const std::int64_t now = events_.now_ps();
  std::int64_t next_ps = kNever;
  // The flows of a step are often alike: one division for a run of equal ones.
  WideInt last_work = -1;
  WideInt last_rate = -1;
  std::int64_t last_ps = 0;
  for (std::size_t f = 0; f < flows_.size(); ++f) {
    Flow& flow = flows_[f];
    flow.rate = rates_[f];
    // A share rounds to zero only past 720720 flows on a 1 byte/s link: such a flow waits.
    if (flow.rate == 0) {
      flow.finish_ps = kNever;
      continue;
    }
    if (flow.work_left != last_work || flow.rate != last_rate) {
      last_work = flow.work_left;
      last_rate = flow.rate;
      last_ps = cost_model::ps_to_carry(flow.work_left, flow.rate);
    }
    flow.finish_ps = now + last_ps;
    next_ps = std::min(next_ps, flow.finish_ps);
  }
  SPMD_CHECK(next_ps != kNever,
             fmt::format("fair link sharing: none of {} flows in flight at {} ps has bandwidth",
                         flows_.size(), now));
  schedule_settle(next_ps);
}

}  // namespace spmd::sim
