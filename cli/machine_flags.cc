#include "cli/machine_flags.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>

#include "reference/error.h"
#include "sim/machine_presets.h"
#include "support/name_lists.h"
#include "support/units.h"

namespace spmd {
namespace {

topology::LinkSpec parse_link(const std::string& text, const std::string& flag) {
  const std::size_t comma = text.find(',');
  if (comma == std::string::npos) {
    throw Error(fmt::format("{} {}: expected BANDWIDTH,LATENCY such as 100GB/s,1us", flag, text));
  }
  return {.bandwidth_bytes_per_s = parse_bandwidth_bytes_per_s(text.substr(0, comma), flag),
          .latency_ps = parse_duration_ps(text.substr(comma + 1), flag)};
}

void check_device_count(int devices) {
  if (devices < 1) throw Error(fmt::format("--devices {}: expected a positive integer", devices));
}

sim::MachineSpec machine_from_topology_flags(const MachineFlags& flags, int devices) {
  check_device_count(devices);
  sim::MachineSpec spec;
  spec.devices = devices;
  const topology::CommandLineLinks links{
      .link = parse_link(flags.link, "--link"),
      .inter_node_link = parse_link(flags.inter_link, "--inter-link")};
  spec.topology = topology::topology_from_text(flags.topology, devices, links);
  spec.name = fmt::format("{} devices, {}, links {}", devices, flags.topology, flags.link);
  return spec;
}

// --link-sharing, when given, over the machine's own.
sim::MachineSpec with_link_sharing(sim::MachineSpec spec, const std::string& flag) {
  if (const std::optional<sim::LinkSharing> sharing = link_sharing_flag(flag)) {
    spec.link_sharing = *sharing;
  }
  return spec;
}

bool is_preset_name(const std::string& name) {
  const std::vector<std::string> presets = machine_preset_names();
  return std::find(presets.begin(), presets.end(), name) != presets.end();
}

std::string algorithm_names() {
  std::vector<std::string_view> names;
  for (collectives::Algorithm a : collectives::all_algorithms()) {
    names.push_back(collectives::algorithm_name(a));
  }
  return comma_list(names);
}

}  // namespace

std::optional<sim::LinkSharing> link_sharing_flag(const std::string& value) {
  if (value.empty()) return std::nullopt;
  if (value != "fair" && value != "fifo") {
    throw Error(fmt::format("--link-sharing {}: expected fair or fifo", value));
  }
  return sim::link_sharing_from_name(value);
}

std::string preset_names() {
  const std::vector<std::string> presets = machine_preset_names();
  return comma_list(std::vector<std::string_view>(presets.begin(), presets.end()));
}

void add_machine_flags(CLI::App& command, MachineFlags& flags, bool with_devices) {
  command.add_option("--machine", flags.machine,
                     fmt::format("A preset ({}) or a machine file (docs/machine-format.md); "
                                 "overrides --topology and --link",
                                 preset_names()));
  if (with_devices) {
    flags.devices_option =
        command
            .add_option("--devices,-n", flags.devices,
                        "Number of devices; with --machine PRESET or a machine file with a fabric, "
                        "that machine with this many (part of one node or whole nodes; a "
                        "power-of-two TPU slice)")
            ->capture_default_str();
  }
  flags.topology_options.push_back(
      command.add_option("--topology", flags.topology, topology::topology_text_syntax())
          ->capture_default_str());
  flags.topology_options.push_back(
      command
          .add_option("--link", flags.link, "Every link's bandwidth and latency, e.g. 100GB/s,1us")
          ->capture_default_str());
  flags.topology_options.push_back(
      command
          .add_option("--inter-link", flags.inter_link,
                      "hierarchical: the links between nodes, e.g. 400Gb/s,5us")
          ->capture_default_str());
  command.add_option("--link-sharing", flags.link_sharing,
                     "How transfers on one link share it: fair (max-min fair bandwidth) or fifo "
                     "(one queue per link) (default: the machine's, else fair)");
  command.add_option("--algorithm", flags.algorithm,
                     fmt::format("Collective algorithm: {} (default: automatic)",
                                 algorithm_names()));
  add_library_choice_flags(command, flags.library_algorithm, flags.protocol);
  add_launch_flags(command, flags.gpus_per_process, flags.graph_launch);
  add_full_simulation_flag(command, flags.full_simulation);
  add_fault_flag(command, flags.faults);
}

void add_launch_flags(CLI::App& command, std::optional<int>& gpus_per_process,
                      bool& graph_launch) {
  command.add_option("--gpus-per-process", gpus_per_process,
                     "On a machine with a fabric, how many of a node's GPUs one process drives, as "
                     "nccl-tests' -g: 1 (one process per GPU) up to the node's GPUs (one process "
                     "per host, as JAX runs) (default: the machine's, else 1)");
  command.add_flag("--graph-launch", graph_launch,
                   "On a machine with a fabric, launch the collectives from a captured CUDA or HIP "
                   "graph, as nccl-tests' -G 1");
}

void add_library_choice_flags(CLI::App& command, std::string& algorithm, std::string& protocol) {
  command.add_option(
      "--nccl-algo", algorithm,
      "On a machine with a fabric, the library's algorithm for every collective, "
      "as NCCL_ALGO sets it: ring, tree, nvls, nvlstree, pat, collnet or allpairs (default: "
      "the machine's, else the library's choice)");
  command.add_option("--nccl-proto", protocol,
                     "On a machine with a fabric, the library's protocol, as NCCL_PROTO sets it: "
                     "LL, LL128 or Simple (default: the machine's, else the library's choice)");
}

cost_model::LibraryChoice library_choice_from_flags(const std::string& algorithm,
                                                    const std::string& protocol) {
  // The names' own errors ("\"LL256\" is no protocol, expected ...") with the flag before them.
  const auto flag_error = [](std::string_view flag, const Error& e) {
    return Error(fmt::format("{}: {}", flag, e.what()));
  };
  cost_model::LibraryChoice choice;
  try {
    if (!algorithm.empty()) choice.algorithm = cost_model::library_algorithm_from_name(algorithm);
  } catch (const Error& e) {
    throw flag_error("--nccl-algo", e);
  }
  try {
    if (!protocol.empty()) choice.protocol = cost_model::protocol_from_name(protocol);
  } catch (const Error& e) {
    throw flag_error("--nccl-proto", e);
  }
  return choice;
}

void add_fault_flag(CLI::App& command, std::vector<std::string>& faults) {
  command.add_option("--fault", faults,
                     "Inject a fault (docs/faults.md), repeatable: straggler:device=D,factor=F,at=T, "
                     "degraded:link=A-B,factor=F,at=T, failed_link:link=A-B,at=T or "
                     "failed_device:device=D,at=T")
      ->allow_extra_args(false);  // one fault per --fault: positional arguments may follow
}

sim::MachineSpec with_fault_flags(sim::MachineSpec spec, const std::vector<std::string>& faults) {
  for (const std::string& text : faults) spec.faults.push_back(sim::fault_from_flag(text));
  return spec;
}

void add_full_simulation_flag(CLI::App& command, bool& full_simulation) {
  command.add_flag("--full-simulation", full_simulation,
                   "Carry every collective message by message, also those the closed form times "
                   "exactly, and (scale) simulate every device, not one per pipeline stage where "
                   "the step is symmetric (both shortcuts give the same times)");
}

sim::SimOptions simulation_options(const MachineFlags& flags, sim::SimOptions options) {
  if (!flags.algorithm.empty()) options.algorithm = collectives::algorithm_from_name(flags.algorithm);
  options.library = library_choice_from_flags(flags.library_algorithm, flags.protocol);
  options.fast_path = !flags.full_simulation;
  return options;
}

// --machine fixes the topology and links, and a machine file without a fabric also the devices:
// flags that would change them and would be ignored are errors instead. A file with a fabric is
// a GPU machine of whole nodes, which --devices scales as it does a preset.
void check_no_topology_flags(const MachineFlags& flags) {
  std::vector<const CLI::Option*> fixed = flags.topology_options;
  if (flags.devices_option != nullptr && flags.devices_option->count() > 0 &&
      !is_preset_name(flags.machine) && !machine_from_name_or_file(flags.machine).fabric) {
    fixed.insert(fixed.begin(), flags.devices_option);
  }
  for (const CLI::Option* option : fixed) {
    if (option->count() > 0) {
      throw Error(fmt::format("{} {}: given with --machine {}, which sets the devices, topology "
                              "and links; expected one or the other",
                              option->get_name(), option->as<std::string>(), flags.machine));
    }
  }
}

// --machine with `devices` devices: a preset made for them, or a machine file's topology
// rescaled to them.
sim::MachineSpec named_machine_with_devices(const MachineFlags& flags, int devices) {
  check_device_count(devices);
  if (is_preset_name(flags.machine)) {
    try {
      return machine_preset_with_devices(flags.machine, devices);
    } catch (const Error& e) {
      throw Error(fmt::format("--devices {}: {}", devices, e.what()));
    }
  }
  sim::MachineSpec spec = machine_from_name_or_file(flags.machine);
  if (spec.fabric && !sim::devices_fit_nodes(devices, spec.fabric->devices_per_node)) {
    const int per_node = spec.fabric->devices_per_node;
    throw Error(fmt::format("--devices {}: machine {} has nodes of {} devices (its fabric), "
                            "expected at most {} or a multiple of {}",
                            devices, flags.machine, per_node, per_node, per_node));
  }
  spec.name = fmt::format("{}, scaled to {} devices", spec.name, devices);
  spec.devices = devices;
  spec.topology = topology::rescaled_topology(spec.topology, devices);
  return spec;
}

sim::MachineSpec with_launch_flags(sim::MachineSpec spec, std::optional<int> gpus_per_process,
                                   bool graph_launch) {
  if (!gpus_per_process && !graph_launch) return spec;
  const std::string flag = gpus_per_process
                               ? fmt::format("--gpus-per-process {}", *gpus_per_process)
                               : std::string("--graph-launch");
  if (!spec.fabric) {
    throw Error(fmt::format("{}: machine '{}' has no fabric, expected a GPU preset or a machine "
                            "file with one (docs/machine-format.md)",
                            flag, spec.name));
  }
  if (gpus_per_process) {
    const int per_node = spec.fabric->devices_per_node;
    if (*gpus_per_process < 1 || *gpus_per_process > per_node) {
      throw Error(fmt::format("{}: expected 1 to {}, the GPUs of one of the machine's nodes",
                              flag, per_node));
    }
    spec.fabric->gpus_per_process = *gpus_per_process;
  }
  if (graph_launch) spec.fabric->graph_launch = true;
  return spec;
}

sim::MachineSpec machine_from_flags(const MachineFlags& flags) {
  sim::MachineSpec spec;
  if (flags.machine.empty()) {
    spec = machine_from_topology_flags(flags, flags.devices);
  } else {
    check_no_topology_flags(flags);
    const bool devices_given = flags.devices_option != nullptr && flags.devices_option->count() > 0;
    spec = devices_given ? named_machine_with_devices(flags, flags.devices)
                         : machine_from_name_or_file(flags.machine);
  }
  return with_launch_flags(
      with_fault_flags(with_link_sharing(std::move(spec), flags.link_sharing), flags.faults),
      flags.gpus_per_process, flags.graph_launch);
}

sim::MachineSpec machine_with_devices(const MachineFlags& flags, int devices) {
  if (flags.machine.empty()) {
    return with_launch_flags(
        with_fault_flags(
            with_link_sharing(machine_from_topology_flags(flags, devices), flags.link_sharing),
            flags.faults),
        flags.gpus_per_process, flags.graph_launch);
  }
  check_no_topology_flags(flags);
  return with_launch_flags(
      with_fault_flags(
          with_link_sharing(named_machine_with_devices(flags, devices), flags.link_sharing),
          flags.faults),
      flags.gpus_per_process, flags.graph_launch);
}

}  // namespace spmd
