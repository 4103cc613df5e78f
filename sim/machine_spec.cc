#include "sim/machine_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <ranges>
#include <string_view>
#include <vector>

#include "reference/error.h"
#include "sim/library_choice_json.h"
#include "sim/machine_presets.h"
#include "support/json_reader.h"
#include "support/json_units.h"
#include "support/units.h"

namespace spmd::sim {
namespace {

using nlohmann::json;

// A size that must be above zero, like "80GiB".
std::int64_t positive_bytes_value(const JsonValue& value, std::string_view example) {
  const std::int64_t bytes = bytes_from_json(value);
  if (bytes == 0) value.fail_value(fmt::format(R"(a size > 0 like "{}")", example));
  return bytes;
}

void read_compute(const JsonValue& compute, MachineSpec& machine) {
  compute.require_object({"peak_flops", "memory_bandwidth"});
  if (auto flops = compute.optional("peak_flops"))
    machine.peak_flops_per_s = flops_per_s_from_json(*flops);
  if (auto bandwidth = compute.optional("memory_bandwidth")) {
    machine.memory_bandwidth_bytes_per_s = bandwidth_from_json(*bandwidth);
  }
}

std::string algorithm_names() {
  const std::vector<collectives::Algorithm> algorithms = collectives::all_algorithms();
  return fmt::format(
      "auto, {}", fmt::join(algorithms | std::views::transform(collectives::algorithm_name), ", "));
}

// The ops whose algorithm a machine file may fix; permute always sends directly.
std::map<std::string, collectives::Algorithm> algorithms_from_json(const JsonValue& object) {
  object.require_object({"all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast"});
  const std::string expected = "one of " + algorithm_names();
  std::map<std::string, collectives::Algorithm> algorithms;
  for (const auto& [op, unused] : object.json().items()) {
    const JsonValue value = object.required(op, expected);
    const std::string name = value.string(expected);
    if (name == "auto") continue;
    try {
      algorithms[op] = collectives::algorithm_from_name(name);
    } catch (const Error&) {
      value.fail_value(expected);  // our message: it names the field
    }
  }
  return algorithms;
}

LinkSharing link_sharing_from_json(const JsonValue& value) {
  static constexpr std::string_view expected = "fair or fifo";
  const std::string name = value.string(expected);
  if (name != "fair" && name != "fifo") value.fail_value(expected);
  return link_sharing_from_name(name);
}

// devices_per_node, and whether the machine's devices fit it: the field's error when given, the
// fabric's when the default is what does not fit.
int devices_per_node_from_json(const JsonValue& fabric, int devices) {
  const std::optional<JsonValue> given = fabric.optional("devices_per_node");
  const int devices_per_node =
      given ? given->positive_int32() : cost_model::Fabric{}.devices_per_node;
  if (devices_fit_nodes(devices, devices_per_node)) return devices_per_node;
  const std::string expected = fmt::format(
      "devices ({0}) at most {1} (part of one node) or a multiple of {1} (whole nodes)", devices,
      devices_per_node);
  if (given) given->fail_value(expected);
  fabric.fail(fmt::format("devices_per_node: {} (the default), expected {}", devices_per_node,
                          expected));
}

// The NICs between nodes: required, with their bandwidth, on a machine of more than one node
// (`required` on an absent field fails naming it).
void read_nics(const JsonValue& fabric_json, int nodes, cost_model::Fabric& fabric) {
  const std::string why = fmt::format("the machine's devices are {} nodes", nodes);
  if (auto nics = fabric_json.optional("nics_per_node")) {
    fabric.nics_per_node = nics->int32(0, std::numeric_limits<int>::max(), "an integer >= 0");
    if (fabric.nics_per_node == 0 && nodes > 1) nics->fail_value("at least 1: " + why);
  } else if (nodes > 1) {
    static_cast<void>(fabric_json.required("nics_per_node", "at least 1: " + why));
  }
  if (auto bandwidth = fabric_json.optional("nic_bandwidth")) {
    fabric.nic_bytes_per_s = bandwidth_from_json(*bandwidth);
  } else if (fabric.nics_per_node > 0 && nodes > 1) {
    static_cast<void>(fabric_json.required(
        "nic_bandwidth", fmt::format(R"(a bandwidth per NIC like "400Gb/s": {})", why)));
  }
}

// A share of a rate, like 0.93: above 0 and at most 1.
double fraction_from_json(const JsonValue& value) {
  static constexpr std::string_view expected = "a number above 0 and at most 1, like 0.9";
  if (!value.is_number()) value.fail_type(expected);
  const double fraction = value.json().get<double>();
  if (!(fraction > 0 && fraction <= 1)) value.fail_value(expected);
  return fraction;
}

// What the machine's owner measured (cost_model::MeasuredTiming), each field optional.
void read_measured(const JsonValue& object, cost_model::MeasuredTiming& measured) {
  if (auto latency = object.optional("launch_latency")) {
    measured.launch_latency_ps = duration_ps_from_json(*latency);
  }
  if (auto latency = object.optional("network_latency")) {
    measured.network_latency_ps = duration_ps_from_json(*latency);
  }
  if (auto share = object.optional("network_efficiency")) {
    measured.network_efficiency = fraction_from_json(*share);
  }
  if (auto share = object.optional("scale_up_efficiency")) {
    measured.scale_up_efficiency = fraction_from_json(*share);
  }
}

void write_measured(const cost_model::MeasuredTiming& measured, json& out) {
  if (measured.launch_latency_ps) {
    out["launch_latency"] = exact_duration_text(*measured.launch_latency_ps);
  }
  if (measured.network_latency_ps) {
    out["network_latency"] = exact_duration_text(*measured.network_latency_ps);
  }
  if (measured.network_efficiency) out["network_efficiency"] = *measured.network_efficiency;
  if (measured.scale_up_efficiency) out["scale_up_efficiency"] = *measured.scale_up_efficiency;
}

// The "fabric" object: the collective library's view of the hardware. Every field but the NICs
// of a multi-node machine has cost_model::Fabric's default.
cost_model::Fabric fabric_from_json(const JsonValue& object, int devices) {
  object.require_object({"generation", "host", "devices_per_node", "scale_up", "scale_up_bandwidth",
                         "in_switch_reduction", "in_network_reduction", "nics_per_node",
                         "nic_bandwidth", "network", "gpus_per_process", "graph_launch",
                         "algorithm", "protocol", "launch_latency", "network_latency",
                         "network_efficiency", "scale_up_efficiency"});
  cost_model::Fabric fabric;
  if (auto generation = object.optional("generation")) {
    fabric.generation = generation->named("a GPU generation", cost_model::generation_from_name);
  }
  if (auto host = object.optional("host")) {
    fabric.host = host->named("a host kind", cost_model::host_kind_from_name);
  }
  fabric.devices_per_node = devices_per_node_from_json(object, devices);
  if (auto scale_up = object.optional("scale_up")) {
    fabric.scale_up = scale_up->named("a scale-up fabric", cost_model::scale_up_kind_from_name);
  }
  if (auto bandwidth = object.optional("scale_up_bandwidth")) {
    fabric.scale_up_bytes_per_s = bandwidth_from_json(*bandwidth);
  }
  if (auto reduction = object.optional("in_switch_reduction")) {
    fabric.in_switch_reduction = reduction->boolean();
  }
  if (auto reduction = object.optional("in_network_reduction")) {
    fabric.in_network_reduction = reduction->boolean();
  }
  read_nics(object, cost_model::nodes_of(fabric, devices), fabric);
  if (auto network = object.optional("network")) {
    fabric.network = network->named("a network", cost_model::network_kind_from_name);
  }
  if (auto gpus = object.optional("gpus_per_process")) {
    fabric.gpus_per_process = gpus->int32(
        1, fabric.devices_per_node,
        fmt::format("1 to devices_per_node ({}): one process drives GPUs of one node",
                    fabric.devices_per_node));
  }
  if (auto graph = object.optional("graph_launch")) fabric.graph_launch = graph->boolean();
  read_measured(object, fabric.measured);
  return fabric;
}

json fabric_to_json(const cost_model::Fabric& fabric, const cost_model::LibraryChoice& library) {
  json out = {
      {"generation", std::string(cost_model::generation_name(fabric.generation))},
      {"host", std::string(cost_model::host_kind_name(fabric.host))},
      {"devices_per_node", fabric.devices_per_node},
      {"scale_up", std::string(cost_model::scale_up_kind_name(fabric.scale_up))},
      {"scale_up_bandwidth", exact_bandwidth_text(fabric.scale_up_bytes_per_s)},
      {"in_switch_reduction", fabric.in_switch_reduction},
      {"in_network_reduction", fabric.in_network_reduction},
      {"nics_per_node", fabric.nics_per_node},
      {"network", std::string(cost_model::network_kind_name(fabric.network))},
      {"gpus_per_process", fabric.gpus_per_process},
      {"graph_launch", fabric.graph_launch},
  };
  // No bandwidth is written as none: a bandwidth of 0 does not read back.
  if (fabric.nic_bytes_per_s > 0) out["nic_bandwidth"] = exact_bandwidth_text(fabric.nic_bytes_per_s);
  if (library.algorithm) {
    out["algorithm"] = std::string(cost_model::library_algorithm_name(*library.algorithm));
  }
  if (library.protocol) out["protocol"] = std::string(cost_model::protocol_name(*library.protocol));
  write_measured(fabric.measured, out);
  return out;
}

}  // namespace

MachineSpec machine_from_json(const json& document) {
  const JsonValue root(document, "machine");
  root.require_object(
      {"name", "devices", "memory", "compute", "topology", "algorithms", "pipeline_chunk",
       "link_sharing", "faults", "fabric"});
  MachineSpec machine;
  if (auto name = root.optional("name")) machine.name = name->string();
  machine.devices = root.required("devices", "a positive integer").positive_int32();
  if (auto memory = root.optional("memory")) {
    machine.memory_bytes = positive_bytes_value(*memory, "80GiB");
  }
  if (auto compute = root.optional("compute")) read_compute(*compute, machine);
  machine.topology = topology::topology_from_json(
      root.required("topology", R"(an object like {"kind": "ring", "link": {...}})"),
      machine.devices);
  if (auto algorithms = root.optional("algorithms")) {
    machine.algorithms = algorithms_from_json(*algorithms);
  }
  if (auto chunk = root.optional("pipeline_chunk")) {
    machine.pipeline_chunk_bytes = positive_bytes_value(*chunk, "2MiB");
  }
  if (auto sharing = root.optional("link_sharing")) {
    machine.link_sharing = link_sharing_from_json(*sharing);
  }
  if (auto faults = root.optional("faults")) {
    const std::string_view expected = R"(a list of faults like [{"kind": "straggler", ...}])";
    for (const JsonValue& fault : faults->elements(expected)) {
      machine.faults.push_back(fault_from_json(fault));
    }
  }
  if (auto fabric = root.optional("fabric")) {
    machine.fabric = fabric_from_json(*fabric, machine.devices);
    // The fabric section's "algorithm" and "protocol": what the library runs on this machine.
    machine.library = library_choice_from_json(*fabric, {"algorithm", "protocol"});
  }
  return machine;
}

bool devices_fit_nodes(int devices, int devices_per_node) {
  return devices <= devices_per_node || devices % devices_per_node == 0;
}

MachineSpec load_machine_file(const std::string& path) {
  // A preset's name where no such file exists: what a user of the library expects from
  // load_machine_file("tpu-v5e-256"), as `--machine` gives.
  std::error_code no_file;
  if (!std::filesystem::exists(path, no_file)) {
    if (std::optional<MachineSpec> preset = machine_preset(path)) return *preset;
  }
  const json document = parse_json_file(path, "the machine file");
  try {
    return machine_from_json(document);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
}

json machine_to_json(const MachineSpec& machine) {
  json algorithms = json::object();
  for (const auto& [op, algorithm] : machine.algorithms) {
    algorithms[op] = std::string(collectives::algorithm_name(algorithm));
  }
  json faults = json::array();
  for (const Fault& fault : machine.faults) faults.push_back(fault_to_json(fault));
  json out = {
      {"name", machine.name},
      {"devices", machine.devices},
      {"memory", exact_bytes_text(machine.memory_bytes)},
      {"compute",
       {{"peak_flops", exact_flops_text(machine.peak_flops_per_s)},
        {"memory_bandwidth", exact_bandwidth_text(machine.memory_bandwidth_bytes_per_s)}}},
      {"topology", topology::topology_to_json(machine.topology)},
      {"algorithms", algorithms},
      {"pipeline_chunk", exact_bytes_text(machine.pipeline_chunk_bytes)},
      {"link_sharing", std::string(link_sharing_name(machine.link_sharing))},
  };
  // Only when there are faults: files written before faults existed stay the same.
  if (!faults.empty()) out["faults"] = faults;
  if (machine.fabric) out["fabric"] = fabric_to_json(*machine.fabric, machine.library);
  return out;
}

}  // namespace spmd::sim
