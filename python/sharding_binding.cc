// spmdsim.visualize: which device holds which block of an array, the text grid `spmdsim
// sharding` prints (reference/sharding_grid.h).

#include <fmt/format.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <vector>

#include "python/bindings.h"
#include "reference/error.h"
#include "reference/mesh.h"
#include "reference/partition_spec.h"
#include "reference/sharding_grid.h"

namespace nb = nanobind;

namespace spmd::python {
namespace {

std::string sharding_text(const std::vector<int>& mesh_shape,
                          const std::vector<std::string>& axis_names,
                          const std::vector<SpecEntry>& spec,
                          const std::vector<std::int64_t>& shape) {
  if (mesh_shape.size() != axis_names.size()) {
    throw Error(fmt::format("axis_names: {} names for a mesh_shape of {} axes, expected one each",
                            axis_names.size(), mesh_shape.size()));
  }
  for (int size : mesh_shape) {
    if (size < 1) throw Error(fmt::format("mesh_shape: axis size {}, expected >= 1", size));
  }
  const Mesh mesh(mesh_shape, axis_names);
  const PartitionSpec partition(spec);
  check_drawable_sharding(mesh, partition, shape,
                          ShardingFields{.mesh = "mesh_shape", .spec = "spec", .shape = "shape"});
  return sharding_grid_text(block_grid(mesh, partition, shape));
}

}  // namespace

void bind_sharding(nb::module_& module) {
  module.def("sharding_text", &sharding_text, nb::arg("mesh_shape"), nb::arg("axis_names"),
             nb::arg("spec"), nb::arg("shape"),
             "The text grid of which mesh position holds which block of a rank-1 or rank-2 "
             "array laid out by spec.");
}

}  // namespace spmd::python
