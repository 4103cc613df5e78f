#pragma once
// A simulated run as a Chrome Trace Event file, which Perfetto (ui.perfetto.dev) and
// chrome://tracing open: one process per device, with a "compute" thread of compute slices, a
// "collectives" thread of collective slices (name, bytes, algorithm, bandwidths; collectives in
// flight at the same time go to further threads "collectives 2", ...), flow arrows
// from sender to receiver for every recorded link message, and a counter track of the memory
// in use; a fault (sim/faults.h) is an instant event at its time. Events come in a fixed order
// and times derive from integer picoseconds, so the same run gives the same bytes.
//
// With groups (traces/track_groups.h) a process is a node or a torus row instead: a thread
// "device D" of compute slices per device, a counter "device D memory in use" per device, and
// the collectives threads once per group (a collective's record is the same on every device);
// arrows join the groups' collectives threads. Without arrows (none recorded), the collectives
// are drawn once, in a process "collectives (every device)" listed first. Consecutive devices of
// a group whose compute and memory are identical share one thread and counter, "devices 8-15".

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "sim/cost_log.h"
#include "traces/track_groups.h"

namespace spmd::traces {

struct TraceLabels {
  std::string machine_name;  // shown in the trace's metadata
  int devices = 0;
  TrackGroups groups;  // a process per device unless set
};

nlohmann::json chrome_trace(const sim::CostLog& log, const TraceLabels& labels);
// The trace as text, one event per line (diffable, and what `spmdsim` writes).
std::string chrome_trace_text(const sim::CostLog& log, const TraceLabels& labels);

}  // namespace spmd::traces
