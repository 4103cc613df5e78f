// run_collective: one jax.lax collective on every device's array, folded in a named reduction
// order (reference/collective_semantics.h), for spmdsim.run_collective.

#include <fmt/format.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "python/bindings.h"
#include "reference/jax_version.h"
#include "reference/collective_call.h"
#include "reference/collective_semantics.h"
#include "reference/error.h"
#include "reference/mesh.h"
#include "reference/reduction_order.h"

namespace nb = nanobind;

namespace spmd::python {
namespace {

// A spmd::Error from a C++ parser, prefixed with the Python argument it came from.
template <class Function>
auto naming_argument(const std::string& argument, Function function) {
  try {
    return function();
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", argument, e.what()));
  }
}

}  // namespace

CollectiveCall call_from_request(const CollectiveRequest& request) {
  CollectiveCall call{.op = naming_argument("op", [&] {
    return collective_op_from_name(request.op);
  })};
  if (call.op == CollectiveOp::axis_index) {
    throw Error("op: \"axis_index\" takes no arrays, expected a collective that moves or "
                "reduces them (psum, pmean, pmax, pmin, all_gather, psum_scatter, all_to_all, "
                "ppermute, pshuffle)");
  }
  call.axes = AxisNames(request.axes);
  call.axis_index_groups = request.axis_index_groups;
  call.axis = request.axis;
  call.tiled = request.tiled;
  call.split_axis = request.split_axis;
  call.concat_axis = request.concat_axis;
  call.perm = request.perm;
  call.shuffle = request.shuffle;
  return call;
}

ReductionOrder order_from_request(const std::string& name, const std::vector<int>& ring,
                                  std::optional<std::int64_t> nccl_chunk_bytes,
                                  std::optional<std::int64_t> gloo_max_segment_bytes,
                                  const std::vector<int>& torus_dims, int device_count) {
  ReductionOrder order{.algorithm = naming_argument("order", [&] {
    return reduction_algorithm_from_name(name);
  })};
  order.ring = ring;
  if (nccl_chunk_bytes) order.nccl_chunk_bytes = *nccl_chunk_bytes;
  if (gloo_max_segment_bytes) order.gloo_max_segment_bytes = *gloo_max_segment_bytes;
  order.torus_dims = torus_dims;
  naming_argument("ring", [&] {
    order.check_device_ring(device_count);
    return 0;
  });
  return order;
}

// One array per device, all of one dtype and shape (SPMD: every device holds the same type).
namespace {

std::vector<Array> device_inputs(const std::vector<WireArray>& arrays, const Mesh& mesh) {
  if (static_cast<int>(arrays.size()) != mesh.device_count()) {
    throw Error(fmt::format("arrays: {} arrays, expected one per device of {} ({} devices)",
                            arrays.size(), mesh.to_string(), mesh.device_count()));
  }
  std::vector<Array> inputs;
  for (std::size_t device = 0; device < arrays.size(); ++device) {
    inputs.push_back(array_from_wire(arrays[device], fmt::format("arrays[{}]", device)));
    if (inputs.back().dtype() != inputs.front().dtype() ||
        inputs.back().shape() != inputs.front().shape()) {
      throw Error(fmt::format("arrays[{}]: {}, expected {} as arrays[0] (one type on every device)",
                              device, inputs.back().type_string(), inputs.front().type_string()));
    }
  }
  return inputs;
}

}  // namespace

Mesh mesh_from_request(const std::vector<int>& mesh_shape,
                       const std::vector<std::string>& axis_names) {
  if (mesh_shape.size() != axis_names.size()) {
    throw Error(fmt::format("mesh_shape: {} axes, expected one per axis name ({})",
                            mesh_shape.size(), axis_names.size()));
  }
  return naming_argument("mesh_shape", [&] { return Mesh(mesh_shape, axis_names); });
}

namespace {

std::vector<WireArray> run_collective(const std::vector<WireArray>& arrays,
                                      const CollectiveRequest& request,
                                      const std::vector<int>& mesh_shape,
                                      const std::vector<std::string>& axis_names,
                                      const std::string& order_name, const std::vector<int>& ring,
                                      std::optional<std::int64_t> nccl_chunk_bytes,
                                      std::optional<std::int64_t> gloo_max_segment_bytes,
                                      const std::vector<int>& torus_dims,
                                      const std::string& jax_version_name) {
  JaxVersion jax_version = kDefaultJaxVersion;
  try {
    jax_version = jax_version_from_name(jax_version_name);
  } catch (const Error& e) {
    throw Error(fmt::format("jax_version: {}", e.what()));
  }
  const Mesh mesh = mesh_from_request(mesh_shape, axis_names);
  const CollectiveCall call = call_from_request(request);
  const ReductionOrder order = order_from_request(order_name, ring, nccl_chunk_bytes,
                                                  gloo_max_segment_bytes, torus_dims,
                                                  mesh.device_count());
  const std::vector<Array> inputs = device_inputs(arrays, mesh);
  validate_collective(call, mesh, inputs.front(), /*check_vma=*/false, jax_version);
  std::vector<WireArray> results;
  for (const Array& result : evaluate_collective(call, mesh, inputs, order)) {
    results.push_back(array_to_wire(result));
  }
  return results;
}

std::vector<std::string> reduction_order_names() {
  std::vector<std::string> names;
  for (ReductionAlgorithm algorithm : kAllReductionAlgorithms) {
    names.emplace_back(reduction_algorithm_name(algorithm));
  }
  return names;
}

std::vector<std::string> collective_op_names() {
  std::vector<std::string> names;
  for (CollectiveOp op : {CollectiveOp::psum, CollectiveOp::pmean, CollectiveOp::pmax,
                          CollectiveOp::pmin, CollectiveOp::all_gather, CollectiveOp::psum_scatter,
                          CollectiveOp::all_to_all, CollectiveOp::ppermute,
                          CollectiveOp::pshuffle}) {
    names.emplace_back(collective_op_name(op));
  }
  return names;
}

}  // namespace

void bind_collective(nb::module_& module) {
  nb::class_<CollectiveRequest>(module, "CollectiveRequest")
      .def(nb::init<>())
      .def_rw("op", &CollectiveRequest::op)
      .def_rw("axes", &CollectiveRequest::axes)
      .def_rw("axis_index_groups", &CollectiveRequest::axis_index_groups)
      .def_rw("axis", &CollectiveRequest::axis)
      .def_rw("tiled", &CollectiveRequest::tiled)
      .def_rw("split_axis", &CollectiveRequest::split_axis)
      .def_rw("concat_axis", &CollectiveRequest::concat_axis)
      .def_rw("perm", &CollectiveRequest::perm)
      .def_rw("shuffle", &CollectiveRequest::shuffle);
  module.def("run_collective", &run_collective, nb::arg("arrays"), nb::arg("request"),
             nb::arg("mesh_shape"), nb::arg("axis_names"), nb::arg("order"), nb::arg("ring"),
             nb::arg("nccl_chunk_bytes").none(), nb::arg("gloo_max_segment_bytes").none(),
             nb::arg("torus_dims"), nb::arg("jax_version"),
             "Every device's result of one collective, float sums folded in the named order.");
  module.def("reduction_order_names", &reduction_order_names,
             "The reduction orders run_collective folds in (docs/reduction-orders.md).");
  module.def("collective_op_names", &collective_op_names,
             "The collectives run_collective runs, by their jax.lax names.");
}

}  // namespace spmd::python
