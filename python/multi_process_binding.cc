// JAX's multi-process array API (reference/multi_process.h) for spmdsim's Python package:
// process layouts, global arrays built from every host's data and split back into it,
// process_allgather, and a shard_map collective run on global arrays (docs/python.md).
//
// A global array crosses the boundary as (shape, spec, blocks by device id); the Python side
// (python/spmdsim/_multi_process.py) keeps it with its mesh and process layout.

#include <fmt/format.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "python/bindings.h"
#include "reference/error.h"
#include "reference/global_array.h"
#include "reference/multi_process.h"
#include "reference/partition_spec.h"
#include "reference/process_layout.h"
#include "reference/reference_backend.h"

namespace nb = nanobind;

namespace spmd::python {
namespace {

using LocalDevices = std::vector<std::vector<int>>;
using WireGlobalArray =
    std::tuple<std::vector<std::int64_t>, std::vector<SpecEntry>, std::vector<WireArray>>;
using WireIndex = std::vector<std::pair<std::int64_t, std::int64_t>>;  // [start, stop) per dim
using WireCallback = std::function<WireArray(int process, const WireIndex& index)>;

// The mesh as the Python functions name it: mesh_shape and axis_names.
struct MeshRequest {
  std::vector<int> mesh_shape;
  std::vector<std::string> axis_names;
};

Mesh mesh_of(const MeshRequest& request) {
  for (int size : request.mesh_shape) {
    if (size < 1) throw Error(fmt::format("mesh_shape: axis size {}, expected >= 1", size));
  }
  return mesh_from_request(request.mesh_shape, request.axis_names);
}

PartitionSpec spec_of(const std::vector<SpecEntry>& entries, const Mesh& mesh,
                      const std::string& argument) {
  PartitionSpec spec(entries);
  validate_spec(spec, mesh, argument);
  return spec;
}

// The processes' devices, sorted as jax.local_devices() lists them; spmd::Error naming
// `processes` where they do not cover `device_count` devices once each.
LocalDevices checked_processes(const LocalDevices& processes, int device_count) {
  const ProcessLayout layout(processes, device_count, "processes");
  LocalDevices sorted;
  for (int p = 0; p < layout.process_count(); ++p) sorted.push_back(layout.local_devices(p));
  return sorted;
}

std::vector<Array> arrays_from_wire(const std::vector<WireArray>& wires,
                                    const std::string& argument) {
  std::vector<Array> arrays;
  for (std::size_t k = 0; k < wires.size(); ++k) {
    arrays.push_back(array_from_wire(wires[k], fmt::format("{}[{}]", argument, k)));
  }
  return arrays;
}

WireGlobalArray global_to_wire(const GlobalArray& array) {
  std::vector<WireArray> blocks;
  for (const Array& block : array.blocks) blocks.push_back(array_to_wire(block));
  return {array.shape, array.spec.entries(), std::move(blocks)};
}

GlobalArray global_from_wire(const WireGlobalArray& wire, const Mesh& mesh) {
  const auto& [shape, spec, blocks] = wire;
  GlobalArray array{.shape = shape, .spec = PartitionSpec(spec),
                    .blocks = arrays_from_wire(blocks, "blocks")};
  if (static_cast<int>(array.blocks.size()) != mesh.device_count()) {
    throw Error(fmt::format("array: {} blocks, expected one per device of {}", array.blocks.size(),
                            mesh.to_string()));
  }
  array.dtype = array.blocks.front().dtype();
  return array;
}

// Process p's argument named as the Python function names it: "local_inputs[1]".
ProcessField field_named(const std::string& argument) {
  return [argument](int process) { return fmt::format("{}[{}]", argument, process); };
}

WireGlobalArray make_from_process_local_data(const MeshRequest& mesh_request,
                                             const std::vector<SpecEntry>& spec,
                                             const LocalDevices& processes,
                                             const std::vector<WireArray>& local_data,
                                             const std::optional<Shape>& global_shape) {
  const Mesh mesh = mesh_of(mesh_request);
  const ProcessLayout layout(processes, mesh.device_count(), "processes");
  const std::vector<Array> data = arrays_from_wire(local_data, "local_data");
  return global_to_wire(make_array_from_process_local_data(
      mesh, layout, spec_of(spec, mesh, "sharding"), data, global_shape));
}

WireGlobalArray host_local_to_global(const MeshRequest& mesh_request,
                                     const std::vector<SpecEntry>& spec,
                                     const LocalDevices& processes,
                                     const std::vector<WireArray>& local_inputs) {
  const Mesh mesh = mesh_of(mesh_request);
  const ProcessLayout layout(processes, mesh.device_count(), "processes");
  const std::vector<Array> data = arrays_from_wire(local_inputs, "local_inputs");
  return global_to_wire(host_local_array_to_global_array(
      mesh, layout, spec_of(spec, mesh, "pspecs"), data, field_named("local_inputs")));
}

WireGlobalArray make_from_callback(const MeshRequest& mesh_request, const Shape& shape,
                                   const std::vector<SpecEntry>& spec,
                                   const LocalDevices& processes, const WireCallback& callback) {
  const Mesh mesh = mesh_of(mesh_request);
  const ProcessLayout layout(processes, mesh.device_count(), "processes");
  for (std::int64_t dim : shape) {
    if (dim < 0) throw Error(fmt::format("shape: dimension {}, expected >= 0", dim));
  }
  const BlockCallback blocks = [&](int process, const BlockIndex& index) {
    WireIndex wire_index;
    for (const IndexRange& range : index) wire_index.emplace_back(range.start, range.stop);
    return array_from_wire(callback(process, wire_index),
                           fmt::format("data_callback (process {})", process));
  };
  return global_to_wire(make_array_from_callback(mesh, layout, shape,
                                                 spec_of(spec, mesh, "sharding"), blocks,
                                                 [](int process) {
                                                   return fmt::format("data_callback (process {})",
                                                                      process);
                                                 }));
}

std::vector<WireArray> global_to_host_local(const MeshRequest& mesh_request,
                                            const std::vector<SpecEntry>& spec,
                                            const LocalDevices& processes,
                                            const WireGlobalArray& array) {
  const Mesh mesh = mesh_of(mesh_request);
  const ProcessLayout layout(processes, mesh.device_count(), "processes");
  std::vector<WireArray> out;
  for (const Array& local : global_array_to_host_local_array(
           mesh, layout, spec_of(spec, mesh, "pspecs"), global_from_wire(array, mesh))) {
    out.push_back(array_to_wire(local));
  }
  return out;
}

WireArray allgather_host_values(const LocalDevices& processes,
                                const std::vector<WireArray>& host_values, bool tiled) {
  int device_count = 0;
  for (const auto& devices : processes) device_count += static_cast<int>(devices.size());
  const ProcessLayout layout(processes, device_count, "processes");
  const std::vector<Array> values = arrays_from_wire(host_values, "in_tree");
  try {
    return array_to_wire(process_allgather(layout, values, tiled));
  } catch (const Error& e) {
    // The reference names the values host_values; the Python argument is in_tree.
    const std::string message = e.what();
    const std::string prefix = "host_values";
    throw Error(message.starts_with(prefix) ? "in_tree" + message.substr(prefix.size())
                                            : message);
  }
}

WireArray allgather_global(const MeshRequest& mesh_request, const LocalDevices& processes,
                           const WireGlobalArray& array, bool tiled) {
  const Mesh mesh = mesh_of(mesh_request);
  const ProcessLayout layout(processes, mesh.device_count(), "processes");
  return array_to_wire(process_allgather(mesh, layout, global_from_wire(array, mesh), tiled));
}

WireArray global_value(const MeshRequest& mesh_request, const WireGlobalArray& array) {
  const Mesh mesh = mesh_of(mesh_request);
  return array_to_wire(global_from_wire(array, mesh).value(mesh));
}

// What a shard_map of one collective needs beyond the array: its specs and reduction order.
struct ShardMapCollectiveRequest {
  std::vector<SpecEntry> in_spec;
  std::vector<SpecEntry> out_spec;
  bool check_vma = true;
  std::string order = "gloo_ring";
  std::vector<int> ring;
};

WireGlobalArray shard_map_collective(const MeshRequest& mesh_request,
                                     const WireGlobalArray& array,
                                     const CollectiveRequest& collective,
                                     const ShardMapCollectiveRequest& request) {
  const Mesh mesh = mesh_of(mesh_request);
  const CollectiveCall call = call_from_request(collective);
  const ReductionOrder order =
      order_from_request(request.order, request.ring, std::nullopt, std::nullopt, {},
                         mesh.device_count());
  ShardMapOptions options;
  options.in_specs = {spec_of(request.in_spec, mesh, "in_specs")};
  options.out_specs = {spec_of(request.out_spec, mesh, "out_specs")};
  options.check_vma = request.check_vma;
  const DeviceFunction body = [call](Context& context, const Values& in) {
    return Values{context.collective(call, in[0])};
  };
  ReferenceBackend backend(order);
  return global_to_wire(
      run_shard_map_global(backend, mesh, body, options, {global_from_wire(array, mesh)})[0]);
}

}  // namespace

void bind_multi_process(nb::module_& module) {
  nb::class_<MeshRequest>(module, "MeshRequest")
      .def(nb::init<>())
      .def_rw("mesh_shape", &MeshRequest::mesh_shape)
      .def_rw("axis_names", &MeshRequest::axis_names);
  nb::class_<ShardMapCollectiveRequest>(module, "ShardMapCollectiveRequest")
      .def(nb::init<>())
      .def_rw("in_spec", &ShardMapCollectiveRequest::in_spec)
      .def_rw("out_spec", &ShardMapCollectiveRequest::out_spec)
      .def_rw("check_vma", &ShardMapCollectiveRequest::check_vma)
      .def_rw("order", &ShardMapCollectiveRequest::order)
      .def_rw("ring", &ShardMapCollectiveRequest::ring);
  module.def("checked_processes", &checked_processes, nb::arg("processes"),
             nb::arg("device_count"),
             "Each process's devices in ascending order, checked to cover the devices once each.");
  module.def("make_array_from_process_local_data", &make_from_process_local_data,
             nb::arg("mesh"), nb::arg("spec"), nb::arg("processes"), nb::arg("local_data"),
             nb::arg("global_shape").none());
  module.def("host_local_array_to_global_array", &host_local_to_global, nb::arg("mesh"),
             nb::arg("spec"), nb::arg("processes"), nb::arg("local_inputs"));
  module.def("make_array_from_callback", &make_from_callback, nb::arg("mesh"), nb::arg("shape"),
             nb::arg("spec"), nb::arg("processes"), nb::arg("callback"));
  module.def("global_array_to_host_local_array", &global_to_host_local, nb::arg("mesh"),
             nb::arg("spec"), nb::arg("processes"), nb::arg("array"));
  module.def("process_allgather_values", &allgather_host_values, nb::arg("processes"),
             nb::arg("host_values"), nb::arg("tiled"));
  module.def("process_allgather_global", &allgather_global, nb::arg("mesh"),
             nb::arg("processes"), nb::arg("array"), nb::arg("tiled"));
  module.def("global_value", &global_value, nb::arg("mesh"), nb::arg("array"));
  module.def("shard_map_collective", &shard_map_collective, nb::arg("mesh"), nb::arg("array"),
             nb::arg("collective"), nb::arg("request"));
}

}  // namespace spmd::python
