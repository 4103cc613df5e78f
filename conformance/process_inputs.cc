#include "conformance/process_inputs.h"

#include <fmt/format.h>

#include "reference/multi_process.h"

namespace spmd::conformance {
namespace {

constexpr std::string_view kLoadNames =
    "\"make_array_from_process_local_data\", \"host_local_array_to_global_array\" or "
    "\"make_array_from_callback\"";

LoadFunction load_function(const JsonValue& value) {
  const std::string name = value.string(kLoadNames);
  if (name == "make_array_from_process_local_data") {
    return LoadFunction::make_array_from_process_local_data;
  }
  if (name == "host_local_array_to_global_array") {
    return LoadFunction::host_local_array_to_global_array;
  }
  if (name == "make_array_from_callback") return LoadFunction::make_array_from_callback;
  value.fail_value(kLoadNames);
}

// `global_shapes`: per input, a shape or null (inferred, as JAX does).
std::vector<std::optional<Shape>> global_shapes(const JsonValue& value, std::size_t inputs) {
  constexpr std::string_view kExpected = "a list of shapes or nulls, one per input";
  std::vector<std::optional<Shape>> shapes;
  for (const JsonValue& entry : value.elements(kExpected)) {
    if (entry.is_null()) {
      shapes.emplace_back();
      continue;
    }
    Shape shape;
    for (int size : entry.int32_list("a shape: a list of sizes", "a size, 0 or more")) {
      if (size < 0) entry.fail_value("a shape: a list of sizes, 0 or more");
      shape.push_back(size);
    }
    shapes.emplace_back(std::move(shape));
  }
  if (shapes.size() != inputs) {
    value.fail(fmt::format("has {} entries, expected {}: one per input", shapes.size(), inputs));
  }
  return shapes;
}

GlobalArray load_input(LoadFunction load, const Mesh& mesh, const ProcessLayout& layout,
                       const PartitionSpec& spec, const std::vector<Array>& local,
                       const std::optional<Shape>& global_shape, std::size_t input) {
  const ProcessField field = [input](int process) {
    return fmt::format("processes[{}].inputs[{}]", process, input);
  };
  switch (load) {
    case LoadFunction::make_array_from_process_local_data:
      return make_array_from_process_local_data(mesh, layout, spec, local, global_shape, field);
    case LoadFunction::host_local_array_to_global_array:
      return host_local_array_to_global_array(mesh, layout, spec, local, field);
    case LoadFunction::make_array_from_callback: {
      // callback = lambda index: data[index], with each process's own data.
      for (std::size_t p = 1; p < local.size(); ++p) {
        if (local[p].shape() != local[0].shape()) {
          throw Error(fmt::format(
              "{}: shape {}, expected {} as processes[0].inputs[{}]: with make_array_from_callback "
              "each process's file is the whole global array as that process has it",
              field(static_cast<int>(p)), shape_to_string(local[p].shape()),
              shape_to_string(local[0].shape()), input));
        }
      }
      const BlockCallback callback = [&local](int process, const BlockIndex& index) {
        Array block = local[static_cast<std::size_t>(process)];
        for (std::size_t d = 0; d < index.size(); ++d) {
          block = slice(block, static_cast<int>(d), index[d].start, index[d].stop);
        }
        return block;
      };
      return make_array_from_callback(mesh, layout, local[0].shape(), spec, callback, field);
    }
  }
  throw Error("load: unknown function");
}

}  // namespace

ProcessInputs read_process_inputs(const JsonValue& processes, const std::optional<JsonValue>& load,
                                  const Mesh& mesh, const ShardMapOptions& shard_map,
                                  const std::function<Array(const JsonValue&)>& load_array) {
  constexpr std::string_view kProcesses =
      "a list of processes, each {\"devices\": [...], \"inputs\": [...]}";
  const std::size_t inputs = shard_map.in_specs.size();
  for (std::size_t k = 0; k < inputs; ++k) {
    if (shard_map.in_specs[k]) continue;
    throw Error(fmt::format("map.in_specs[{}]: null, expected a PartitionSpec: each input of a "
                            "multi-process case is a global array sharded by its in_spec",
                            k));
  }
  std::vector<std::vector<int>> devices;
  std::vector<std::vector<Array>> local(inputs);  // local[input][process]
  for (const JsonValue& process : processes.elements(kProcesses)) {
    process.require_object({"devices", "inputs"});
    devices.push_back(process.required("devices", "a list of device ids")
                          .int32_list("a list of device ids", "a device id"));
    constexpr std::string_view kFiles = "a list of {\"file\": ...} entries, one per input";
    const JsonValue files = process.required("inputs", kFiles);
    const std::vector<JsonValue> entries = files.elements(kFiles);
    if (entries.size() != inputs) {
      files.fail(fmt::format("has {} files, expected {}: one per input (map.in_specs)",
                             entries.size(), inputs));
    }
    for (std::size_t k = 0; k < inputs; ++k) local[k].push_back(load_array(entries[k]));
  }
  ProcessInputs result{ProcessLayout(devices, mesh.device_count(), "processes"),
                      LoadFunction::make_array_from_process_local_data, {}};
  std::vector<std::optional<Shape>> shapes(inputs);
  if (load) {
    load->require_object({"function", "global_shapes"});
    result.load = load_function(load->required("function", kLoadNames));
    if (const std::optional<JsonValue> given = load->optional("global_shapes")) {
      if (result.load != LoadFunction::make_array_from_process_local_data) {
        given->fail("is only for make_array_from_process_local_data, expected no global_shapes");
      }
      shapes = global_shapes(*given, inputs);
    }
  }
  for (std::size_t k = 0; k < inputs; ++k) {
    result.arrays.push_back(load_input(result.load, mesh, result.layout, *shard_map.in_specs[k],
                                       local[k], shapes[k], k));
  }
  return result;
}

}  // namespace spmd::conformance
