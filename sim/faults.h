#pragma once
// Faults injected into a simulated machine (docs/faults.md), each from a virtual time on:
//   straggler   - a device's compute takes `factor` times as long (the part of a compute span
//                 after `at`),
//   degraded    - a link's bandwidth times `factor` (0 < factor <= 1),
//   failed_link - a link carries nothing: messages go around it where the topology has another
//                 path (sim/route_cache.h); where it has none, a collective step that needs it
//                 fails with an spmd::Error naming the collective and the link,
//   failed_device - every collective whose group holds the device and that has not finished by
//                 `at` fails, with an spmd::Error naming the device and the members that waited.
// Faults change time or end a run with an error, never values: a run with only stragglers and
// degraded links gives the same bits as one without. They come from the machine file ("faults"),
// `--fault` on the command line or MachineSpec::faults; all are fixed, so a run with faults is
// as deterministic as one without. Times count from the first run on the Machine, its runs
// joined one after another as append_run joins their cost logs.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "support/json_reader.h"
#include "topology/topology.h"

namespace spmd::sim {

enum class FaultKind { straggler, degraded, failed_link, failed_device };

struct Fault {
  FaultKind kind = FaultKind::straggler;
  int device = -1;      // straggler, failed_device
  int link_from = -1;   // degraded, failed_link: the directed link between these nodes
  int link_to = -1;
  double factor = 1;    // straggler (>= 1), degraded (0 < factor <= 1)
  std::int64_t at_ps = 0;
  friend bool operator==(const Fault&, const Fault&) = default;
};

std::string_view fault_kind_name(FaultKind kind);
// "straggler: device 3 computes 2x slower from 1 ms", for the cost log, traces and errors.
std::string fault_description(const Fault& fault);

// `--fault KIND:FIELD=VALUE,...`, e.g. "straggler:device=3,factor=2,at=1ms",
// "degraded:link=0-1,factor=0.5,at=0us", "failed_link:link=2-3,at=5us",
// "failed_device:device=1,at=10us". Errors are one line naming the field, value and the form.
Fault fault_from_flag(std::string_view text);
// One element of a machine file's "faults" list: {"kind": "straggler", "device": 3, ...}.
Fault fault_from_json(const JsonValue& value);
nlohmann::json fault_to_json(const Fault& fault);

// spmd::Error unless every fault names a device of the topology or a link it has, and no device
// has two stragglers; `field` prefixes errors ("machine.faults").
void check_faults(const std::vector<Fault>& faults, const topology::Topology& topology,
                  std::string_view field);

// The faults of one run, by device and link, in run-local time (the run starts at `origin_ps` of
// the Machine's timeline).
class FaultPlan {
 public:
  FaultPlan(const std::vector<Fault>& faults, const topology::Topology& topology,
            std::int64_t origin_ps);

  bool any() const { return !faults_.empty(); }
  // Whether links or devices fail or slow down: the closed-form fast path is then not exact.
  bool changes_collectives() const { return changes_collectives_; }
  // The end of a compute span of `duration_ps` starting at `start_ps` on the machine device.
  std::int64_t compute_end_ps(int device, std::int64_t start_ps, std::int64_t duration_ps) const;
  // When the machine device fails (run-local), if it does.
  std::optional<std::int64_t> device_failure_ps(int device) const;
  // The first of `links` failed at or before `time_ps`, if any.
  std::optional<int> failed_link(const std::vector<int>& links, std::int64_t time_ps) const;
  // The faults in run-local time, in the order given (for the cost log and events).
  struct Timed {
    Fault fault;
    std::int64_t at_ps;  // run-local; may be negative (before this run)
    std::vector<int> links;  // degraded, failed_link: the topology's link ids
  };
  const std::vector<Timed>& faults() const { return faults_; }

 private:
  std::vector<Timed> faults_;
  bool changes_collectives_ = false;
};

// "link 2-3 (ring)", for errors.
std::string link_name(const topology::Topology& topology, int link);
// The topology's links from `from` to `to`; empty if none.
std::vector<int> links_between(const topology::Topology& topology, int from, int to);
// A bandwidth times a degradation factor, at least 1 byte/s.
std::int64_t degraded_bandwidth(std::int64_t bytes_per_s, double factor);

}  // namespace spmd::sim
