#include "sim/machine_spec.h"

#include <climits>
#include <fstream>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "reference/error.h"
#include "sim/units.h"

namespace spmd::sim {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Reading JSON values, each error naming the value's path.

// The value as JSON on one line, shortened if long.
std::string value_text(const json& value) {
  constexpr std::size_t kMaxShown = 60;
  std::string text = value.dump();
  if (text.size() > kMaxShown) text = text.substr(0, kMaxShown) + "...";
  return text;
}

std::string with_article(const json& value) {
  switch (value.type()) {
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::null: return "null";
    default: return "a number";
  }
}

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw Error(path + ": " + message);
}

// A value of the right type but a bad value: `topology.dims[1]: 0, expected a positive integer`.
[[noreturn]] void fail_value(const std::string& path, const json& value,
                             const std::string& expected) {
  fail(path, value_text(value) + ", expected " + expected);
}

// A value of the wrong type: `devices: "8" is a string, expected a positive integer`.
[[noreturn]] void fail_type(const std::string& path, const json& value,
                            const std::string& expected) {
  fail(path, value_text(value) + " is " + with_article(value) + ", expected " + expected);
}

std::string child_path(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string element_path(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

std::string joined(std::initializer_list<std::string_view> names, std::string_view separator) {
  std::string text;
  for (std::string_view name : names) {
    if (!text.empty()) text += separator;
    text += name;
  }
  return text;
}

// An object whose every key is in `known`: a misspelt field must not be silently ignored.
void require_object_of(const json& value, const std::string& path,
                       std::initializer_list<std::string_view> known) {
  const std::string shown_path = path.empty() ? "machine" : path;
  if (!value.is_object()) {
    fail_type(shown_path, value, "an object with fields " + joined(known, ", "));
  }
  for (const auto& [key, unused] : value.items()) {
    bool is_known = false;
    for (std::string_view name : known) is_known = is_known || key == name;
    if (!is_known) {
      fail(child_path(path, key), "unknown field, expected one of " + joined(known, ", "));
    }
  }
}

const json* optional_field(const json& object, std::string_view key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

const json& required_field(const json& object, const std::string& path, std::string_view key,
                           const std::string& expected) {
  const json* value = optional_field(object, key);
  if (value == nullptr) fail(child_path(path, key), "missing, expected " + expected);
  return *value;
}

int positive_int(const json& value, const std::string& path) {
  constexpr const char* kExpected = "a positive integer";
  if (!value.is_number()) fail_type(path, value, kExpected);
  if (!value.is_number_integer()) fail_value(path, value, kExpected);
  // nlohmann holds an integer >= 0 as unsigned when parsed, as signed when built in C++.
  const bool positive =
      value.is_number_unsigned() ? value.get<std::uint64_t>() > 0 : value.get<std::int64_t>() > 0;
  if (!positive) fail_value(path, value, kExpected);
  if (value.get<std::uint64_t>() > INT_MAX) {
    fail_value(path, value, "a positive integer up to 2147483647");
  }
  return value.get<int>();
}

std::string string_value(const json& value, const std::string& path, const std::string& expected) {
  if (!value.is_string()) fail_type(path, value, expected);
  return value.get<std::string>();
}

bool boolean_value(const json& value, const std::string& path) {
  if (!value.is_boolean()) fail_type(path, value, "true or false");
  return value.get<bool>();
}

// A JSON number as the text the unit parsers read: "123", "1.5e+20", "3350000000000.0".
std::string number_text(const json& value) { return value.dump(); }

std::int64_t bytes_value(const json& value, const std::string& path) {
  if (value.is_number()) return parse_bytes(number_text(value), path);
  if (!value.is_string()) fail_type(path, value, R"(a size like "80GiB" or a number of bytes)");
  return parse_bytes(value.get<std::string>(), path);
}

std::int64_t bandwidth_value(const json& value, const std::string& path) {
  if (value.is_number()) return parse_bandwidth_bytes_per_s(number_text(value), path);
  if (!value.is_string()) {
    fail_type(path, value, R"(a bandwidth like "100GB/s" or a number of bytes/s)");
  }
  return parse_bandwidth_bytes_per_s(value.get<std::string>(), path);
}

std::int64_t duration_value(const json& value, const std::string& path) {
  // A bare number could mean ps, ns or us depending on who wrote it.
  if (!value.is_string()) fail_type(path, value, R"(a string with a unit like "1.5us" or "500ns")");
  return parse_duration_ps(value.get<std::string>(), path);
}

double flops_value(const json& value, const std::string& path) {
  if (value.is_number()) {
    const double flops = value.get<double>();
    if (!(flops > 0)) fail_value(path, value, R"(a compute rate > 0 like "989TFLOP/s")");
    return flops;
  }
  if (!value.is_string()) fail_type(path, value, R"(a compute rate like "989TFLOP/s" or a number)");
  return parse_flops(value.get<std::string>(), path);
}

topology::LinkSpec link_value(const json& value, const std::string& path) {
  require_object_of(value, path, {"bandwidth", "latency"});
  topology::LinkSpec link;
  link.bandwidth_bytes_per_s =
      bandwidth_value(required_field(value, path, "bandwidth", R"(a bandwidth like "100GB/s")"),
                      child_path(path, "bandwidth"));
  link.latency_ps =
      duration_value(required_field(value, path, "latency", R"(a duration like "1us")"),
                     child_path(path, "latency"));
  return link;
}

const json& required_link(const json& object, const std::string& path, std::string_view key) {
  return required_field(object, path, key, R"({"bandwidth": "100GB/s", "latency": "1us"})");
}

// ---------------------------------------------------------------------------------------------
// The topology, by kind. `devices` is the machine's; each kind checks that it agrees.

const std::initializer_list<std::string_view> kTopologyKinds = {
    "ring", "torus", "mesh", "fully_connected", "switch", "hierarchical"};

void read_grid(const json& object, const std::string& path, TopologySpec& spec) {
  require_object_of(object, path, {"kind", "dims", "link", "links"});
  const std::string dims_path = child_path(path, "dims");
  const json& dims = required_field(object, path, "dims", "an array of 2 or 3 sizes like [4, 4]");
  if (!dims.is_array()) fail_type(dims_path, dims, "an array of 2 or 3 sizes like [4, 4]");
  if (dims.size() != 2 && dims.size() != 3) {
    fail_value(dims_path, dims, "2 or 3 sizes like [4, 4] or [4, 4, 4]");
  }
  std::int64_t product = 1;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    spec.dims.push_back(positive_int(dims[k], element_path(dims_path, k)));
    product *= spec.dims.back();
  }
  if (product != spec.devices) {
    fail(dims_path, value_text(dims) + " has " + std::to_string(product) +
                        " devices, expected a product equal to devices (" +
                        std::to_string(spec.devices) + ")");
  }
  const json* link = optional_field(object, "link");
  const json* links = optional_field(object, "links");
  const std::string links_path = child_path(path, "links");
  if (link != nullptr && links != nullptr) {
    fail(links_path, "given together with " + child_path(path, "link") + ", expected only one");
  }
  if (link == nullptr && links == nullptr) {
    fail(child_path(path, "link"), R"(missing, expected a link for every dimension )"
                                   R"(or "links" with one per dimension)");
  }
  if (link != nullptr) {
    spec.dim_links.assign(spec.dims.size(), link_value(*link, child_path(path, "link")));
    return;
  }
  if (!links->is_array()) fail_type(links_path, *links, "an array with one link per dimension");
  if (links->size() != spec.dims.size()) {
    fail(links_path, std::to_string(links->size()) + " links, expected one per dimension (" +
                         std::to_string(spec.dims.size()) + ")");
  }
  for (std::size_t k = 0; k < links->size(); ++k) {
    spec.dim_links.push_back(link_value((*links)[k], element_path(links_path, k)));
  }
}

void read_hierarchical(const json& object, const std::string& path, TopologySpec& spec) {
  require_object_of(object, path,
                    {"kind", "devices_per_node", "intra_node_link", "inter_node_link"});
  const std::string per_node_path = child_path(path, "devices_per_node");
  const json& per_node = required_field(object, path, "devices_per_node", "a positive integer");
  spec.devices_per_node = positive_int(per_node, per_node_path);
  if (spec.devices % spec.devices_per_node != 0) {
    fail_value(per_node_path, per_node,
               "a divisor of devices (" + std::to_string(spec.devices) + ")");
  }
  spec.link = link_value(required_link(object, path, "intra_node_link"),
                         child_path(path, "intra_node_link"));
  spec.inter_node_link = link_value(required_link(object, path, "inter_node_link"),
                                    child_path(path, "inter_node_link"));
}

TopologySpec topology_from_json(const json& object, const std::string& path, int devices) {
  if (!object.is_object()) {
    fail_type(path, object, R"(an object like {"kind": "ring", "link": {...}})");
  }
  TopologySpec spec;
  spec.devices = devices;
  const std::string kinds = "one of " + joined(kTopologyKinds, ", ");
  const json& kind = required_field(object, path, "kind", kinds);
  spec.kind = string_value(kind, child_path(path, "kind"), kinds);
  if (spec.kind == "ring") {
    require_object_of(object, path, {"kind", "bidirectional", "link"});
    if (const json* bidirectional = optional_field(object, "bidirectional")) {
      spec.bidirectional = boolean_value(*bidirectional, child_path(path, "bidirectional"));
    }
    spec.link = link_value(required_link(object, path, "link"), child_path(path, "link"));
  } else if (spec.kind == "torus" || spec.kind == "mesh") {
    read_grid(object, path, spec);
  } else if (spec.kind == "fully_connected" || spec.kind == "switch") {
    require_object_of(object, path, {"kind", "link"});
    spec.link = link_value(required_link(object, path, "link"), child_path(path, "link"));
  } else if (spec.kind == "hierarchical") {
    read_hierarchical(object, path, spec);
  } else {
    fail_value(child_path(path, "kind"), kind, kinds);
  }
  return spec;
}

// ---------------------------------------------------------------------------------------------
// Algorithms per op.

std::string algorithm_names() {
  std::string names = "auto";
  // Every enumerator from the first to the last, as algorithm.h declares them.
  for (int k = static_cast<int>(collectives::Algorithm::direct);
       k <= static_cast<int>(collectives::Algorithm::torus); ++k) {
    names +=
        ", " + std::string(collectives::algorithm_name(static_cast<collectives::Algorithm>(k)));
  }
  return names;
}

// The ops whose algorithm a machine file may fix; permute always sends directly.
std::map<std::string, collectives::Algorithm> algorithms_from_json(const json& object,
                                                                   const std::string& path) {
  require_object_of(object, path,
                    {"all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast"});
  std::map<std::string, collectives::Algorithm> algorithms;
  for (const auto& [op, value] : object.items()) {
    const std::string op_path = child_path(path, op);
    const std::string expected = "one of " + algorithm_names();
    const std::string name = string_value(value, op_path, expected);
    if (name == "auto") continue;
    try {
      algorithms[op] = collectives::algorithm_from_name(name);
    } catch (const Error&) {
      fail_value(op_path, value, expected);  // our message: it names the field
    }
  }
  return algorithms;
}

// ---------------------------------------------------------------------------------------------
// Writing.

json link_to_json(const topology::LinkSpec& link) {
  return {{"bandwidth", exact_bandwidth_text(link.bandwidth_bytes_per_s)},
          {"latency", exact_duration_text(link.latency_ps)}};
}

bool same_link(const topology::LinkSpec& a, const topology::LinkSpec& b) {
  return a.bandwidth_bytes_per_s == b.bandwidth_bytes_per_s && a.latency_ps == b.latency_ps;
}

json topology_to_json(const TopologySpec& spec) {
  json out = {{"kind", spec.kind}};
  if (spec.kind == "torus" || spec.kind == "mesh") {
    out["dims"] = spec.dims;
    bool uniform = !spec.dim_links.empty();
    for (const topology::LinkSpec& link : spec.dim_links) {
      uniform = uniform && same_link(link, spec.dim_links.front());
    }
    if (uniform) {
      out["link"] = link_to_json(spec.dim_links.front());
    } else {
      out["links"] = json::array();
      for (const topology::LinkSpec& link : spec.dim_links)
        out["links"].push_back(link_to_json(link));
    }
  } else if (spec.kind == "hierarchical") {
    out["devices_per_node"] = spec.devices_per_node;
    out["intra_node_link"] = link_to_json(spec.link);
    out["inter_node_link"] = link_to_json(spec.inter_node_link);
  } else {
    if (spec.kind == "ring") out["bidirectional"] = spec.bidirectional;
    out["link"] = link_to_json(spec.link);
  }
  return out;
}

}  // namespace

MachineSpec machine_from_json(const json& root) {
  require_object_of(
      root, "",
      {"name", "devices", "memory", "compute", "topology", "algorithms", "pipeline_chunk"});
  MachineSpec machine;
  if (const json* name = optional_field(root, "name")) {
    machine.name = string_value(*name, "name", "a string");
  }
  machine.devices =
      positive_int(required_field(root, "", "devices", "a positive integer"), "devices");
  if (const json* memory = optional_field(root, "memory")) {
    machine.memory_bytes = bytes_value(*memory, "memory");
    if (machine.memory_bytes == 0) fail_value("memory", *memory, R"(a size > 0 like "80GiB")");
  }
  if (const json* compute = optional_field(root, "compute")) {
    require_object_of(*compute, "compute", {"peak_flops", "memory_bandwidth"});
    if (const json* flops = optional_field(*compute, "peak_flops")) {
      machine.peak_flops_per_s = flops_value(*flops, "compute.peak_flops_per_s");
    }
    if (const json* bandwidth = optional_field(*compute, "memory_bandwidth")) {
      machine.memory_bandwidth_bytes_per_s =
          bandwidth_value(*bandwidth, "compute.memory_bandwidth");
    }
  }
  machine.topology = topology_from_json(
      required_field(root, "", "topology", R"(an object like {"kind": "ring", "link": {...}})"),
      "topology", machine.devices);
  if (const json* algorithms = optional_field(root, "algorithms")) {
    machine.algorithms = algorithms_from_json(*algorithms, "algorithms");
  }
  if (const json* chunk = optional_field(root, "pipeline_chunk")) {
    machine.pipeline_chunk_bytes = bytes_value(*chunk, "pipeline_chunk");
    if (machine.pipeline_chunk_bytes == 0) {
      fail_value("pipeline_chunk", *chunk, R"(a size > 0 like "2MiB")");
    }
  }
  return machine;
}

MachineSpec load_machine_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open file");
  json root;
  try {
    root = json::parse(in);
  } catch (const json::parse_error& e) {
    throw Error(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  try {
    return machine_from_json(root);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

json machine_to_json(const MachineSpec& machine) {
  json algorithms = json::object();
  for (const auto& [op, algorithm] : machine.algorithms) {
    algorithms[op] = std::string(collectives::algorithm_name(algorithm));
  }
  return {
      {"name", machine.name},
      {"devices", machine.devices},
      {"memory", exact_bytes_text(machine.memory_bytes)},
      {"compute",
       {{"peak_flops", exact_flops_text(machine.peak_flops_per_s)},
        {"memory_bandwidth", exact_bandwidth_text(machine.memory_bandwidth_bytes_per_s)}}},
      {"topology", topology_to_json(machine.topology)},
      {"algorithms", algorithms},
      {"pipeline_chunk", exact_bytes_text(machine.pipeline_chunk_bytes)},
  };
}

std::unique_ptr<topology::Topology> make_topology(const TopologySpec& spec) {
  if (spec.kind == "ring") return topology::make_ring(spec.devices, spec.link, spec.bidirectional);
  if (spec.kind == "torus") return topology::make_torus(spec.dims, spec.dim_links, true);
  if (spec.kind == "mesh") return topology::make_torus(spec.dims, spec.dim_links, false);
  if (spec.kind == "fully_connected")
    return topology::make_fully_connected(spec.devices, spec.link);
  if (spec.kind == "switch") return topology::make_switch(spec.devices, spec.link);
  if (spec.kind == "hierarchical") {
    if (spec.devices_per_node < 1 || spec.devices % spec.devices_per_node != 0) {
      throw Error("topology.devices_per_node: " + std::to_string(spec.devices_per_node) +
                  ", expected a divisor of devices (" + std::to_string(spec.devices) + ")");
    }
    return topology::make_hierarchical(spec.devices / spec.devices_per_node, spec.devices_per_node,
                                       spec.link, spec.inter_node_link);
  }
  throw Error("topology.kind: \"" + spec.kind + "\", expected one of " +
              joined(kTopologyKinds, ", "));
}

}  // namespace spmd::sim
