#include "sim/link_state.h"

#include <algorithm>

#include "topology/link_time.h"

namespace spmd::sim {

LinkState::LinkState(const topology::Topology& topology)
    : topology_(topology), free_at_ps_(topology.links().size(), 0) {}

const RouteTiming& LinkState::route(int from, int to) {
  const std::uint64_t key =
      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from)) << 32) |
      static_cast<std::uint32_t>(to);
  auto it = routes_.find(key);
  if (it != routes_.end()) return it->second;
  RouteTiming timing;
  timing.links = topology_.route(from, to);
  for (int link : timing.links) {
    const topology::LinkSpec& spec = topology_.links()[static_cast<std::size_t>(link)].spec;
    timing.latency_ps += spec.latency_ps;
    if (timing.bandwidth_bytes_per_s == 0 ||
        spec.bandwidth_bytes_per_s < timing.bandwidth_bytes_per_s) {
      timing.bandwidth_bytes_per_s = spec.bandwidth_bytes_per_s;
    }
  }
  // Bounded: routes on a long ring are long, and a run may ask for millions of pairs.
  if (cached_links_ + timing.links.size() > kMaxCachedLinks) {
    routes_.clear();
    cached_links_ = 0;
  }
  cached_links_ += timing.links.size();
  return routes_.emplace(key, std::move(timing)).first->second;
}

std::int64_t LinkState::send(int from, int to, std::int64_t bytes, std::int64_t ready_ps) {
  if (from == to) return ready_ps;
  const RouteTiming& timing = route(from, to);
  std::int64_t start_ps = ready_ps;
  for (int link : timing.links) {
    start_ps = std::max(start_ps, free_at_ps_[static_cast<std::size_t>(link)]);
  }
  const std::int64_t serialization =
      topology::serialization_ps(bytes, timing.bandwidth_bytes_per_s);
  for (int link : timing.links) free_at_ps_[static_cast<std::size_t>(link)] = start_ps + serialization;
  ++transfers_;
  return start_ps + timing.latency_ps + serialization;
}

}  // namespace spmd::sim
