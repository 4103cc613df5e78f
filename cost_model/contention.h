#pragma once
// Contention under fifo link sharing (docs/link-sharing.md; the default, fair, is
// cost_model/fair_share.h): each directed link is a FIFO, served in request order. A message ready at
// `ready_ps` on a route whose links are all free again at `route_free_ps` (the latest of their
// free times) starts when both hold, holds every link of the route for its serialization time
// (cut-through, cost_model/link_time.h), and arrives after the route's latency on top. The
// links' free times themselves are state of a run: sim/link_state.*.

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "cost_model/link_time.h"
#include "support/checked_math.h"

namespace spmd::cost_model {

struct ContendedTransfer {
  std::int64_t start_ps = 0;       // the first byte enters the route
  std::int64_t links_free_ps = 0;  // every link of the route is free again
  std::int64_t arrival_ps = 0;     // the last byte has arrived
};

inline ContendedTransfer contended_transfer(std::int64_t ready_ps, std::int64_t route_free_ps,
                                            std::int64_t bytes, const RouteCost& route) {
  const std::int64_t start_ps = std::max(ready_ps, route_free_ps);
  const std::int64_t serialization = serialization_ps(bytes, route.bandwidth_bytes_per_s);
  constexpr std::string_view kWhat = "simulated time in ps of a transfer's arrival";
  const std::int64_t links_free_ps = checked_add(start_ps, serialization, kWhat);
  return {start_ps, links_free_ps, checked_add(links_free_ps, route.latency_ps, kWhat)};
}

}  // namespace spmd::cost_model
