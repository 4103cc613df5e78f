#include "traces/track_groups.h"

#include <vector>

namespace spmd::traces {

TrackGroups track_groups_for(const topology::Topology& topology) {
  const std::vector<int> dims = topology.dims();
  if (dims.size() < 2 || dims.back() <= 1) return {};
  const int devices = topology.device_count();
  // dims are {nodes, devices per node} for a machine of nodes; the innermost dimension varies
  // fastest in device order on tori and meshes (topology/torus.cc), so a group is a row.
  if (topology.kind() == "hierarchical") {
    return dims.front() > 1 ? TrackGroups{dims.back(), "node"} : TrackGroups{};
  }
  if (devices > kLargestUngroupedGrid) return {dims.back(), "row"};
  return {};
}

}  // namespace spmd::traces
