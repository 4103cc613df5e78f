#pragma once
// A mesh laid on a machine: the machine device each mesh device runs on, and, where the mesh's
// axes lie along the machine's dimensions (torus / mesh dims; nodes x devices per node), the grid
// a collective's group forms along them, so the torus algorithm and rings of a group over a mesh
// axis run on that dimension's links (like jax.experimental.mesh_utils.create_device_mesh).
//
// The default (PlacementSpec::Kind::automatic): on a torus or mesh, create_device_mesh's
// assignment of whole machine dimensions to mesh axes, the last (most communication-heavy) axis
// first, each taking the largest set of free dimensions whose sizes multiply to its size; where
// some axis finds none, row-major. Elsewhere row-major, which on a hierarchical machine is
// node-major: the innermost mesh axis inside a node.
//
// The simulator keeps mesh device ids wherever the program and the cost log see devices; it maps
// them to machine devices where groups meet the topology (routes, rings, the grid) and for the
// memory ledger (each machine device's memory).

#include <string>
#include <vector>

#include "reference/mesh.h"
#include "sim/placement_spec.h"
#include "topology/topology.h"

namespace spmd::sim {

// A group of a collective on the machine.
struct PlacedGroup {
  std::vector<int> devices;    // machine device of each rank
  std::vector<int> grid_dims;  // the ranks' grid along machine dimensions, row-major, major
                               // first (the torus algorithm's dims); empty: they form none
};

class MeshPlacement {
 public:
  // spmd::Error naming the placement, the value and the expectation when `spec` does not map
  // every mesh device onto its own machine device of `topology`.
  MeshPlacement(const PlacementSpec& spec, const Mesh& mesh, const topology::Topology& topology);

  int device(int mesh_device) const { return devices_[static_cast<std::size_t>(mesh_device)]; }
  const std::vector<int>& devices() const { return devices_; }  // by mesh device
  int mesh_device(int machine_device) const;                    // -1: none runs there
  // `mesh_devices` (a group in rank order) on the machine.
  PlacedGroup group(const std::vector<int>& mesh_devices) const;
  // What was placed, as placement_from_text reads it: "data=y,model=x", or "row-major" /
  // "devices:..." where the axes do not lie along dimensions.
  std::string text() const;

  // A piece of a machine dimension that one mesh axis spans.
  struct Part {
    int axis = 0;         // mesh axis
    int dim = 0;          // machine dimension
    int size = 1;         // coordinates
    int step = 1;         // machine coordinate per coordinate of the part
    int mesh_stride = 1;  // mesh device ids per coordinate of the part
  };

 private:
  int part_coordinate(int mesh_device, const Part& part) const {
    return mesh_device / part.mesh_stride % part.size;
  }
  std::vector<int> grid_of(const std::vector<int>& mesh_devices) const;

  std::vector<int> devices_;       // by mesh device
  std::vector<int> mesh_devices_;  // by machine device, -1 where none
  std::vector<Part> parts_;        // mesh row-major order; empty: not along dimensions
  std::vector<int> machine_dims_;  // the topology's dims()
  std::vector<std::string> dim_names_;
  std::vector<std::string> axis_names_;
  std::string fallback_text_;  // "row-major" or "devices:..." when parts_ is empty
  std::string explicit_text_;  // the spec's text when it named the axes' dimensions
};

}  // namespace spmd::sim
