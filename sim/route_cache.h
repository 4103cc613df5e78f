#pragma once
// The routes between device pairs of a run, with their latency and bottleneck bandwidth: asked
// of the topology once, then remembered (up to a bound: a long ring's routes are long and a run
// may ask for millions of pairs). Once links have failed (faults), a topology route that crosses
// one is replaced by a detour: the fewest-hop path over the links still working, any node
// (switch or device) forwarding, ties broken by the lowest link ids. Without one the topology's
// route stays, failed link and all, for the run to report.

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "topology/topology.h"

namespace spmd::sim {

struct RouteTiming {
  std::vector<int> links;
  std::int64_t latency_ps = 0;             // sum over the route
  std::int64_t bandwidth_bytes_per_s = 0;  // the slowest link's
};

class RouteCache {
 public:
  explicit RouteCache(const topology::Topology& topology)
      : topology_(topology), last_route_(static_cast<std::size_t>(topology.device_count())) {}

  // Shared, so that a flow in flight keeps its route when the cache is emptied.
  const std::shared_ptr<const RouteTiming>& route(int from, int to);

  // From now on routes avoid `link` where the topology allows (routes already taken keep theirs).
  void fail_link(int link);
  bool any_link_failed() const { return !failed_.empty(); }
  bool link_failed(int link) const {
    return !failed_.empty() && failed_[static_cast<std::size_t>(link)] != 0;
  }

 private:
  std::shared_ptr<const RouteTiming> timing(int from, int to) const;
  std::vector<int> links_between(int from, int to) const;
  std::optional<std::vector<int>> detour(int from, int to) const;
  void clear();

  const topology::Topology& topology_;
  // Looked up by key only, never iterated, so its order cannot reach any output.
  std::unordered_map<std::uint64_t, std::shared_ptr<const RouteTiming>> routes_;
  // The route each device last sent on: a collective's rank sends to the same peer step after
  // step (a ring's successor), so most sends skip the hash lookup. Its pointers stay valid until
  // routes_ is cleared (a rehash does not move the map's elements), which resets them.
  struct LastRoute {
    int to = -1;
    const std::shared_ptr<const RouteTiming>* timing = nullptr;
  };
  std::vector<LastRoute> last_route_;  // by source device
  static constexpr std::size_t kMaxCachedLinks = std::size_t{1} << 23;
  std::size_t cached_links_ = 0;
  std::vector<char> failed_;                    // by link; empty while none failed
  std::vector<std::vector<int>> links_out_of_;  // by node, ascending link ids; built at a failure
};

}  // namespace spmd::sim
