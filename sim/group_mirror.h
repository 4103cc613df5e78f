#pragma once
// A run of representatives (docs/simulator.md, "The symmetric step"): a reduced mesh whose
// devices stand for the devices of a full mesh that run alike. Each reduced device is one full
// mesh device (its representative); a collective's group on the reduced mesh is timed, and its
// buffers sized, as the group of the full mesh that holds those representatives, and its record
// counts the full mesh's groups. The devices that are not simulated arrive as their
// representative does, so the run is the full run's where every collective's time depends only
// on its group's size and spread (a machine with a fabric: sim/library_timing.h) and every
// device's program on its representative's coordinates; workloads/symmetric_step.h decides when
// that holds.

#include <map>
#include <string>
#include <vector>

#include "reference/collective_call.h"
#include "reference/mesh.h"
#include "sim/mesh_placement.h"

namespace spmd::sim {

// The full mesh's group that stands behind a reduced group.
struct MirroredGroup {
  PlacedGroup placed;  // the full group's machine devices, in rank order
  int axis_size = 1;   // the full mesh's axis size for the call
  int groups = 1;      // the groups the call forms on the full mesh
};

class GroupMirror {
 public:
  // `representative[r]`: the full mesh device reduced device r stands for; `full_placement`
  // places `full_mesh` on the machine.
  GroupMirror(Mesh full_mesh, MeshPlacement full_placement, std::vector<int> representative);

  // The full group of `call` that holds the representative of `reduced_members.front()`.
  MirroredGroup full_group(const CollectiveCall& call, const std::vector<int>& reduced_members) const;
  int representative(int reduced_device) const {
    return representative_[static_cast<std::size_t>(reduced_device)];
  }
  const std::vector<int>& representatives() const { return representative_; }
  const Mesh& full_mesh() const { return full_mesh_; }
  const MeshPlacement& full_placement() const { return full_placement_; }

 private:
  struct Groups {
    std::vector<std::vector<int>> groups;  // full mesh device ids, rank order
    std::vector<int> group_of;             // by full mesh device
    int axis_size = 1;
  };
  const Groups& groups_for(const CollectiveCall& call) const;

  Mesh full_mesh_;
  MeshPlacement full_placement_;
  std::vector<int> representative_;
  // By the call's axes and groups (what collective_groups reads): built once per kind of call.
  mutable std::map<std::string, Groups> groups_;
};

}  // namespace spmd::sim
