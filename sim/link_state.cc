#include "sim/link_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "cost_model/contention.h"
#include "reference/check.h"
#include "sim/fair_links.h"

namespace spmd::sim {

LinkState::LinkState(const topology::Topology& topology, EventQueue& events,
                     LinkSharing sharing)
    : topology_(topology), events_(events), sharing_(sharing), routes_(topology) {
  if (sharing == LinkSharing::fair) {
    fair_ = std::make_unique<FairLinks>(topology, events);
  } else {
    free_at_ps_.assign(topology.links().size(), 0);
  }
}

LinkState::~LinkState() = default;

std::optional<std::int64_t> LinkState::send_step(const StepTransfers& step,
                                                 StepListener& listener) {
  const std::int64_t now = events_.now_ps();
  if (fair_) {
    const std::size_t flows = fair_->start_step(step, listener, routes_);
    transfers_ += flows;
    if (flows > 0) return std::nullopt;
    return now;
  }
  // fifo: every arrival is known now, so the step's end is too (no event per transfer).
  std::int64_t end = now;
  collectives::for_each_message(
      step.transfers, [&](const collectives::Transfer& t, std::int64_t elements) {
        const int from = step.devices[static_cast<std::size_t>(t.source)];
        const int to = step.devices[static_cast<std::size_t>(t.destination)];
        if (from == to) return;  // a local copy: no link, no time
        const std::int64_t bytes = elements * step.element_bytes;
        const std::int64_t arrival = send_fifo(from, to, bytes, now);
        if (step.record) listener.transfer_arrived(from, to, bytes, now, arrival);
        end = std::max(end, arrival);
      });
  return end;
}

// Waits until every link of the route is free, holds them all for the serialization time and
// returns the arrival time (the rule: cost_model/contention.h). A link's free time never
// decreases.
std::int64_t LinkState::send_fifo(int from, int to, std::int64_t bytes, std::int64_t ready_ps) {
  const RouteTiming& timing = *routes_.route(from, to);
  std::int64_t route_free_ps = 0;
  for (int link : timing.links) {
    route_free_ps = std::max(route_free_ps, free_at_ps_[static_cast<std::size_t>(link)]);
  }
  std::int64_t bandwidth = timing.bandwidth_bytes_per_s;
  if (!bandwidth_override_.empty()) {
    // Degraded links (faults): the route's slowest link as it is now.
    bandwidth = std::numeric_limits<std::int64_t>::max();
    for (int link : timing.links) {
      const std::int64_t override_bps = bandwidth_override_[static_cast<std::size_t>(link)];
      bandwidth = std::min(bandwidth, override_bps > 0 ? override_bps
                                                      : topology_.links()[static_cast<std::size_t>(link)]
                                                            .spec.bandwidth_bytes_per_s);
    }
  }
  const cost_model::ContendedTransfer transfer = cost_model::contended_transfer(
      ready_ps, route_free_ps, bytes, {timing.latency_ps, bandwidth});
  // route_free_ps is the latest free time of the route's links, so checking it once covers
  // every link (this is the hot path of cost-only runs).
  SPMD_CHECK(transfer.links_free_ps >= route_free_ps,
             fmt::format("links from {} to {} free at {} ps would go back to {} ps ({} bytes)",
                         from, to, route_free_ps, transfer.links_free_ps, bytes));
  for (int link : timing.links)
    free_at_ps_[static_cast<std::size_t>(link)] = transfer.links_free_ps;
  ++transfers_;
  return transfer.arrival_ps;
}

}  // namespace spmd::sim

namespace spmd::sim {

void LinkState::set_link_bandwidth(int link, std::int64_t bytes_per_s) {
  if (fair_) {
    fair_->set_link_bandwidth(link, bytes_per_s);
    return;
  }
  bandwidth_override_.resize(topology_.links().size(), 0);
  bandwidth_override_[static_cast<std::size_t>(link)] = bytes_per_s;
}

std::optional<int> LinkState::failed_link_on(const StepTransfers& step) {
  if (!routes_.any_link_failed()) return std::nullopt;  // the hot path of runs without faults
  for (const collectives::Transfer& t : step.transfers) {
    const int from = step.devices[static_cast<std::size_t>(t.source)];
    const int to = step.devices[static_cast<std::size_t>(t.destination)];
    if (from == to) continue;
    for (int link : routes_.route(from, to)->links) {
      if (routes_.link_failed(link)) return link;
    }
  }
  return std::nullopt;
}

}  // namespace spmd::sim
