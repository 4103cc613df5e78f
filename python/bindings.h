#pragma once
// The pieces of the Python module spmdsim._core (python/core_module.cc), one file each. Arrays
// cross the boundary as (dtype name, shape, bytes): NumPy has no bfloat16 of its own, so the
// Python side (python/spmdsim/_arrays.py) turns them into ndarrays.

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "reference/array.h"
#include "reference/collective_call.h"
#include "reference/mesh.h"
#include "reference/reduction_order.h"

namespace spmd::python {

// One array as it crosses into or out of the module: dtype name ("float32", "bfloat16", ...),
// shape, and the row-major little-endian element bytes (bfloat16 as its 16-bit patterns).
using WireArray = std::tuple<std::string, std::vector<std::int64_t>, nanobind::bytes>;

Array array_from_wire(const WireArray& wire, const std::string& argument);
WireArray array_to_wire(const Array& array);

// A collective's parameters as spmdsim passes them (JAX's names); _core.CollectiveRequest.
struct CollectiveRequest {
  std::string op;
  std::vector<std::string> axes;
  std::optional<AxisIndexGroups> axis_index_groups;
  int axis = 0;
  bool tiled = false;
  int split_axis = 0;
  int concat_axis = 0;
  std::vector<std::pair<int, int>> perm;
  std::vector<int> shuffle;
};

// The request as a call; spmd::Error naming `op` for an unknown or array-less collective.
CollectiveCall call_from_request(const CollectiveRequest& request);
// The named reduction order with its parameters; spmd::Error naming `order` or `ring`.
ReductionOrder order_from_request(const std::string& name, const std::vector<int>& ring,
                                  std::optional<std::int64_t> nccl_chunk_bytes,
                                  std::optional<std::int64_t> gloo_max_segment_bytes,
                                  const std::vector<int>& torus_dims, int device_count);
// The mesh; spmd::Error naming `mesh_shape` for sizes or names that do not make one.
Mesh mesh_from_request(const std::vector<int>& mesh_shape,
                       const std::vector<std::string>& axis_names);

void bind_collective(nanobind::module_& module);  // run_collective, order and op names
void bind_conform(nanobind::module_& module);     // conform_case
void bind_estimate(nanobind::module_& module);    // estimate_hlo, machine_preset_names
void bind_sharding(nanobind::module_& module);    // sharding_text
// ProcessLayout checks, the multi-process array functions, shard_map on global arrays
void bind_multi_process(nanobind::module_& module);

}  // namespace spmd::python
