#include "sim/route_cache.h"

#include "cost_model/link_time.h"

#include <algorithm>

namespace spmd::sim {

const std::shared_ptr<const RouteTiming>& RouteCache::route(int from, int to) {
  LastRoute& last = last_route_[static_cast<std::size_t>(from)];
  if (last.to == to) return *last.timing;
  const std::uint64_t key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from)) << 32) |
                            static_cast<std::uint32_t>(to);
  auto it = routes_.find(key);
  if (it != routes_.end()) {
    last = {to, &it->second};
    return it->second;
  }
  std::shared_ptr<const RouteTiming> timing = this->timing(from, to);
  if (cached_links_ + timing->links.size() > kMaxCachedLinks) {
    routes_.clear();
    std::fill(last_route_.begin(), last_route_.end(), LastRoute{});
    cached_links_ = 0;
  }
  cached_links_ += timing->links.size();
  const std::shared_ptr<const RouteTiming>& cached =
      routes_.emplace(key, std::move(timing)).first->second;
  last = {to, &cached};
  return cached;
}

std::shared_ptr<const RouteTiming> RouteCache::timing(int from, int to) const {
  auto timing = std::make_shared<RouteTiming>();
  timing->links = topology_.route(from, to);
  cost_model::RouteCost cost;
  for (int link : timing->links) {
    const topology::LinkSpec& spec = topology_.links()[static_cast<std::size_t>(link)].spec;
    cost = cost_model::with_link(cost, spec.latency_ps, spec.bandwidth_bytes_per_s);
  }
  timing->latency_ps = cost.latency_ps;
  timing->bandwidth_bytes_per_s = cost.bandwidth_bytes_per_s;
  return timing;
}

}  // namespace spmd::sim
