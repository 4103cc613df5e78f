#pragma once
// The links as a run goes, under the machine's link sharing (sim/link_sharing.h): what a
// schedule run sends a step's transfers to, and learns the step's end from. Under fifo each
// directed link is one queue, served in request order (when each link is next free is all the
// state, and a step's end is known as soon as it is sent); under fair the links are shared
// max-min fairly between the flows in flight (sim/fair_links.h) and a step's end is known only
// when its last flow is done. Also the routes between device pairs and how many messages
// crossed links.

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "sim/event_queue.h"
#include "sim/link_sharing.h"
#include "sim/link_step.h"
#include "sim/route_cache.h"
#include "topology/topology.h"

namespace spmd::sim {

class FairLinks;

class LinkState {
 public:
  // `events` is the run's clock: fair sharing schedules its settles on it.
  LinkState(const topology::Topology& topology, EventQueue& events, LinkSharing sharing);
  ~LinkState();

  // Sends the step's transfers at events.now_ps(). Returns the step's end (its last arrival)
  // when it is known now: always under fifo, and for a step that crosses no link. Otherwise
  // returns nothing, and `listener.step_ended(end)` is called from an event later.
  std::optional<std::int64_t> send_step(const StepTransfers& step, StepListener& listener);

  // The route between two devices, its links, latency and bottleneck bandwidth (valid until the
  // next call).
  const RouteTiming& route(int from, int to) { return *routes_.route(from, to); }

  LinkSharing sharing() const { return sharing_; }

  // Faults (sim/faults.h), applied by the run at their times. From now on the link carries at
  // `bytes_per_s`: under fifo messages sent from now on, under fair sharing every flow on it
  // from now on (the rates are shared anew).
  void set_link_bandwidth(int link, std::int64_t bytes_per_s);
  // From now on the link carries nothing: routes go around it where the topology allows
  // (sim/route_cache.h).
  void fail_link(int link) { routes_.fail_link(link); }
  // The first failed link a transfer of the step would cross, if any: only where no route
  // avoids it.
  std::optional<int> failed_link_on(const StepTransfers& step);
  const topology::Topology& topology() const { return topology_; }
  std::uint64_t transfers() const { return transfers_; }
  // fifo: when the link is next free.
  std::int64_t busy_until_ps(int link) const { return free_at_ps_[static_cast<std::size_t>(link)]; }

 private:
  std::int64_t send_fifo(int from, int to, std::int64_t bytes, std::int64_t ready_ps);

  const topology::Topology& topology_;
  EventQueue& events_;
  LinkSharing sharing_;
  RouteCache routes_;
  std::vector<std::int64_t> free_at_ps_;  // fifo, by link
  std::unique_ptr<FairLinks> fair_;       // fair
  // fifo: bandwidths that faults changed, by link (empty while none did).
  std::vector<std::int64_t> bandwidth_override_;
  std::uint64_t transfers_ = 0;
};

}  // namespace spmd::sim
