#pragma once
// How a trace groups device tracks: a process per node on a machine of several nodes, a process
// per row of the innermost dimension on a large torus or mesh, a process per device otherwise.
// Perfetto lists processes as collapsible groups, so a 512-device run opens as 64 node groups
// instead of 512 processes, and a collective (whose times are the same on every device: one
// record per call) is drawn once per group instead of once per device.

#include <string>

#include "topology/topology.h"

namespace spmd::traces {

struct TrackGroups {
  int devices_per_group = 1;  // 1: a process per device, as on a small machine
  std::string kind = "device";  // "node" or "row": the group's name in the trace
};

// Grids up to this many devices keep a process per device: they fit on a screen as they are.
inline constexpr int kLargestUngroupedGrid = 64;

TrackGroups track_groups_for(const topology::Topology& topology);

}  // namespace spmd::traces
