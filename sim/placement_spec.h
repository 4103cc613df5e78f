#pragma once
// Where a mesh's devices should lie on a machine's devices: the request, as `--placement` and
// SimOptions::placement take it (sim/mesh_placement.h turns it into a device map for one mesh on
// one topology). Text forms:
//
//   auto                     the default for the topology (see docs/simulator.md, Placement)
//   row-major                mesh device d on machine device d
//   devices:3,2,1,0          mesh device d on machine device list[d]
//   data=y,model=x           mesh axes along machine dimensions
//   a=x:4,b=x+y              a mesh axis along several dimensions, or a piece of one
//
// Machine dimensions are named x, y, z (torus / mesh dims 0, 1, 2) or inter, intra
// (hierarchical: across nodes, inside a node), or given by number. In AXIS=PART+PART..., the
// first part is the axis's major one; PART is DIM or DIM:SIZE. A dimension split between
// several parts gives them out major first in the order they appear; a part without a size
// takes what the dimension's sized parts leave.

#include <string>
#include <string_view>
#include <vector>

namespace spmd::sim {

// A piece of one machine dimension: `size` coordinates of it (0: what the others leave).
struct DimPart {
  std::string dim;  // "x", "y", "z", "inter", "intra", or a number
  int size = 0;
  friend bool operator==(const DimPart&, const DimPart&) = default;
};

struct AxisPlacement {
  std::string axis;
  std::vector<DimPart> parts;  // major first
  friend bool operator==(const AxisPlacement&, const AxisPlacement&) = default;
};

struct PlacementSpec {
  enum class Kind { automatic, row_major, axes, devices };
  Kind kind = Kind::automatic;
  std::vector<AxisPlacement> axes;  // Kind::axes
  std::vector<int> devices;         // Kind::devices: mesh device d -> machine device devices[d]
  friend bool operator==(const PlacementSpec&, const PlacementSpec&) = default;
};

// spmd::Error naming `flag` (e.g. "--placement"), the text and the expected form.
PlacementSpec placement_from_text(std::string_view text, std::string_view flag = "--placement");
// The text placement_from_text reads back as the same spec.
std::string placement_text(const PlacementSpec& spec);
// One line of the forms, for help texts and errors.
std::string_view placement_syntax();

}  // namespace spmd::sim
