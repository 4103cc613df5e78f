#include "sim/route_cache.h"

#include "cost_model/link_time.h"

#include <algorithm>
#include <queue>

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
  if (cached_links_ + timing->links.size() > kMaxCachedLinks) clear();
  cached_links_ += timing->links.size();
  const std::shared_ptr<const RouteTiming>& cached =
      routes_.emplace(key, std::move(timing)).first->second;
  last = {to, &cached};
  return cached;
}

void RouteCache::clear() {
  routes_.clear();
  std::fill(last_route_.begin(), last_route_.end(), LastRoute{});
  cached_links_ = 0;
}

void RouteCache::fail_link(int link) {
  const std::vector<topology::Link>& links = topology_.links();
  if (failed_.empty()) {
    failed_.assign(links.size(), 0);
    links_out_of_.assign(static_cast<std::size_t>(topology_.node_count()), {});
    for (std::size_t id = 0; id < links.size(); ++id) {
      links_out_of_[static_cast<std::size_t>(links[id].from)].push_back(static_cast<int>(id));
    }
  }
  failed_[static_cast<std::size_t>(link)] = 1;
  clear();  // routes from now on are chosen anew
}

std::vector<int> RouteCache::links_between(int from, int to) const {
  std::vector<int> links = topology_.route(from, to);
  const bool crosses_failed =
      std::any_of(links.begin(), links.end(), [&](int link) { return link_failed(link); });
  if (!crosses_failed) return links;
  return detour(from, to).value_or(std::move(links));
}

// Breadth-first over nodes, links in ascending id order: the first path found has the fewest
// hops, and the same one on every run.
std::optional<std::vector<int>> RouteCache::detour(int from, int to) const {
  const std::vector<topology::Link>& links = topology_.links();
  std::vector<int> reached_by(static_cast<std::size_t>(topology_.node_count()), -1);  // link id
  std::vector<char> seen(reached_by.size(), 0);
  std::queue<int> frontier;
  frontier.push(from);
  seen[static_cast<std::size_t>(from)] = 1;
  while (!frontier.empty() && !seen[static_cast<std::size_t>(to)]) {
    const int node = frontier.front();
    frontier.pop();
    for (int link : links_out_of_[static_cast<std::size_t>(node)]) {
      const auto next = static_cast<std::size_t>(links[static_cast<std::size_t>(link)].to);
      if (link_failed(link) || seen[next]) continue;
      seen[next] = 1;
      reached_by[next] = link;
      frontier.push(static_cast<int>(next));
    }
  }
  if (!seen[static_cast<std::size_t>(to)]) return std::nullopt;
  std::vector<int> path;
  for (int node = to; node != from;) {
    const int link = reached_by[static_cast<std::size_t>(node)];
    path.push_back(link);
    node = links[static_cast<std::size_t>(link)].from;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

std::shared_ptr<const RouteTiming> RouteCache::timing(int from, int to) const {
  auto timing = std::make_shared<RouteTiming>();
  timing->links = failed_.empty() ? topology_.route(from, to) : links_between(from, to);
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
