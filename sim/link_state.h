#pragma once
// The links as a run goes: when each directed link is next free (one FIFO per direction, served
// in request order), the routes between device pairs (asked for once, then remembered), and how
// many messages crossed links.

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "topology/topology.h"

namespace spmd::sim {

struct RouteTiming {
  std::vector<int> links;
  std::int64_t latency_ps = 0;             // sum over the route
  std::int64_t bandwidth_bytes_per_s = 0;  // the slowest link's
};

class LinkState {
 public:
  explicit LinkState(const topology::Topology& topology);

  // Valid until the next call.
  const RouteTiming& route(int from, int to);

  // Sends `bytes` from `from` to `to` no earlier than `ready_ps`: waits until every link of the
  // route is free, holds them all for the serialization time and returns the arrival time
  // (the rule: cost_model/contention.h). A link's free time never decreases.
  std::int64_t send(int from, int to, std::int64_t bytes, std::int64_t ready_ps);

  std::uint64_t transfers() const { return transfers_; }
  std::int64_t busy_until_ps(int link) const { return free_at_ps_[static_cast<std::size_t>(link)]; }

 private:
  const topology::Topology& topology_;
  std::vector<std::int64_t> free_at_ps_;
  // Looked up by key only, never iterated, so its order cannot reach any output.
  std::unordered_map<std::uint64_t, RouteTiming> routes_;
  // The route each device last sent on: a collective's rank sends to the same peer step after
  // step (a ring's successor), so most sends skip the hash lookup. Its pointers stay valid until
  // routes_ is cleared (a rehash does not move the map's elements), which resets them.
  struct LastRoute {
    int to = -1;
    const RouteTiming* timing = nullptr;
  };
  std::vector<LastRoute> last_route_;  // by source device
  static constexpr std::size_t kMaxCachedLinks = std::size_t{1} << 23;
  std::size_t cached_links_ = 0;
  std::uint64_t transfers_ = 0;
};

}  // namespace spmd::sim
