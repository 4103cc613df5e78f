#include "tools/machine_flags.h"

#include "reference/error.h"
#include "sim/units.h"
#include "tools/machine_presets.h"
#include "tools/sim_backend.h"

namespace spmd {
namespace {

topology::LinkSpec parse_link(const std::string& text, const std::string& flag) {
  const std::size_t comma = text.find(',');
  if (comma == std::string::npos) {
    throw Error(flag + " " + text + ": expected BANDWIDTH,LATENCY such as 100GB/s,1us");
  }
  return {.bandwidth_bytes_per_s = sim::parse_bandwidth_bytes_per_s(text.substr(0, comma), flag),
          .latency_ps = sim::parse_duration_ps(text.substr(comma + 1), flag)};
}

sim::MachineSpec machine_from_topology_flags(const MachineFlags& flags, int devices) {
  if (devices < 1) {
    throw Error("--devices " + std::to_string(devices) + ": expected a positive integer");
  }
  sim::MachineSpec spec;
  spec.devices = devices;
  spec.topology = topology_from_text(flags.topology, devices);
  const topology::LinkSpec link = parse_link(flags.link, "--link");
  spec.topology.link = link;
  for (auto& dim_link : spec.topology.dim_links) dim_link = link;
  spec.topology.inter_node_link = parse_link(flags.inter_link, "--inter-link");
  spec.name = std::to_string(devices) + " devices, " + flags.topology + ", links " + flags.link;
  sim::machine_from_json(sim::machine_to_json(spec));  // the file reader's checks
  return spec;
}

}  // namespace

void add_machine_flags(CLI::App& command, MachineFlags& flags, bool with_devices) {
  command.add_option("--machine", flags.machine,
                     "A preset (dgx-h100, dgx-h100-x4, tpu-v4-64, tpu-v5e-256) or a machine "
                     "file (docs/machine-format.md); overrides --topology and --link");
  if (with_devices) {
    command.add_option("--devices,-n", flags.devices, "Number of devices")->capture_default_str();
  }
  command.add_option("--topology", flags.topology,
                     "ring, ring-uni, torus[:AxB[xC]], mesh[:AxB[xC]], fully_connected, switch, "
                     "hierarchical:K")
      ->capture_default_str();
  command.add_option("--link", flags.link, "Every link's bandwidth and latency, e.g. 100GB/s,1us")
      ->capture_default_str();
  command.add_option("--inter-link", flags.inter_link,
                     "hierarchical: the links between nodes, e.g. 400Gb/s,5us")
      ->capture_default_str();
  command.add_option("--algorithm", flags.algorithm,
                     "Collective algorithm: direct, ring, bidirectional_ring, halving_doubling, "
                     "binary_tree, double_binary_tree, torus (default: automatic)");
}

sim::MachineSpec machine_from_flags(const MachineFlags& flags) {
  if (!flags.machine.empty()) return machine_from_name_or_file(flags.machine);
  return machine_from_topology_flags(flags, flags.devices);
}

sim::MachineSpec machine_with_devices(const MachineFlags& flags, int devices) {
  if (flags.machine.empty()) return machine_from_topology_flags(flags, devices);
  sim::MachineSpec base = machine_from_name_or_file(flags.machine);
  MachineFlags from_base = flags;
  from_base.topology = base.topology.kind == "hierarchical"
                           ? "hierarchical:" + std::to_string(base.topology.devices_per_node)
                           : base.topology.kind;
  if (base.topology.kind == "ring" && !base.topology.bidirectional) from_base.topology = "ring-uni";
  sim::MachineSpec spec = machine_from_topology_flags(from_base, devices);
  const topology::LinkSpec first_link =
      base.topology.dim_links.empty() ? base.topology.link : base.topology.dim_links.front();
  spec.topology.link = first_link;
  for (auto& dim_link : spec.topology.dim_links) dim_link = first_link;
  spec.topology.inter_node_link = base.topology.inter_node_link;
  spec.name = base.name + ", scaled to " + std::to_string(devices) + " devices";
  spec.memory_bytes = base.memory_bytes;
  spec.peak_flops_per_s = base.peak_flops_per_s;
  spec.memory_bandwidth_bytes_per_s = base.memory_bandwidth_bytes_per_s;
  spec.algorithms = base.algorithms;
  spec.pipeline_chunk_bytes = base.pipeline_chunk_bytes;
  return spec;
}

}  // namespace spmd
