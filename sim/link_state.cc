#include "sim/link_state.h"

#include <fmt/format.h>

#include <algorithm>

#include "cost_model/contention.h"
#include "reference/check.h"

namespace spmd::sim {

LinkState::LinkState(const topology::Topology& topology)
    : topology_(topology),
      free_at_ps_(topology.links().size(), 0),
      last_route_(static_cast<std::size_t>(topology.device_count())) {}

const RouteTiming& LinkState::route(int from, int to) {
  LastRoute& last = last_route_[static_cast<std::size_t>(from)];
  if (last.to == to) return *last.timing;
  const std::uint64_t key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from)) << 32) |
                            static_cast<std::uint32_t>(to);
  auto it = routes_.find(key);
  if (it != routes_.end()) {
    last = {to, &it->second};
    return it->second;
  }
  RouteTiming timing;
  timing.links = topology_.route(from, to);
  cost_model::RouteCost cost;
  for (int link : timing.links) {
    const topology::LinkSpec& spec = topology_.links()[static_cast<std::size_t>(link)].spec;
    cost = cost_model::with_link(cost, spec.latency_ps, spec.bandwidth_bytes_per_s);
  }
  timing.latency_ps = cost.latency_ps;
  timing.bandwidth_bytes_per_s = cost.bandwidth_bytes_per_s;
  // Bounded: routes on a long ring are long, and a run may ask for millions of pairs.
  if (cached_links_ + timing.links.size() > kMaxCachedLinks) {
    routes_.clear();
    std::fill(last_route_.begin(), last_route_.end(), LastRoute{});
    cached_links_ = 0;
  }
  cached_links_ += timing.links.size();
  const RouteTiming& cached = routes_.emplace(key, std::move(timing)).first->second;
  last = {to, &cached};
  return cached;
}

std::int64_t LinkState::send(int from, int to, std::int64_t bytes, std::int64_t ready_ps) {
  if (from == to) return ready_ps;
  const RouteTiming& timing = route(from, to);
  std::int64_t route_free_ps = 0;
  for (int link : timing.links) {
    route_free_ps = std::max(route_free_ps, free_at_ps_[static_cast<std::size_t>(link)]);
  }
  const cost_model::ContendedTransfer transfer = cost_model::contended_transfer(
      ready_ps, route_free_ps, bytes, {timing.latency_ps, timing.bandwidth_bytes_per_s});
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
