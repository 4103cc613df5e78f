#pragma once
// The flags that name a machine on the command line: `--machine PRESET|FILE`, or a machine
// built from `--devices N --topology T --link BANDWIDTH,LATENCY [--inter-link ...]`; and
// `--link-sharing fair|fifo`, which applies to either.

#include <optional>
#include <string>
#include <vector>

#include "cli/cli11_fwd.h"
#include "sim/machine.h"
#include "sim/machine_spec.h"

namespace spmd {

struct MachineFlags {
  std::string machine;  // a preset name or a machine file; wins over the rest
  int devices = 8;
  std::string topology = "ring";
  std::string link = "100GB/s,1us";
  std::string inter_link = "50GB/s,5us";  // hierarchical: between nodes
  std::string algorithm;                  // every collective, where it can run
  std::string library_algorithm;  // --nccl-algo: ring, tree, nvls, nvlstree, pat, collnet, allpairs
  std::string protocol;                   // --nccl-proto: LL, LL128 or Simple
  bool full_simulation = false;           // no closed-form fast path
  std::string link_sharing;               // fair or fifo; empty: the machine's
  std::vector<std::string> faults;        // --fault, as written (sim/faults.h)
  // --gpus-per-process and --graph-launch: how the program launches its collectives, over the
  // machine's fabric (cost_model::Fabric). None: the fabric's own.
  std::optional<int> gpus_per_process;
  bool graph_launch = false;
  // --devices, to tell whether the command line gave it: with --machine PRESET it sets the
  // preset's device count (machine_preset_with_devices); a machine file fixes its own. Null for
  // commands without it.
  const CLI::Option* devices_option = nullptr;
  // The flags --machine makes meaningless (--topology, --link, --inter-link), to tell whether
  // the command line gave them.
  std::vector<const CLI::Option*> topology_options;
};

// "dgx-h100, dgx-h100-x4, ...": the presets --machine takes, for help texts.
std::string preset_names();
// `with_devices`: false for commands that set the device count themselves (scale).
void add_machine_flags(CLI::App& command, MachineFlags& flags, bool with_devices = true);
// `--nccl-algo` / `--nccl-proto`: the library's algorithm and protocol on a machine with a
// fabric, as NCCL_ALGO / NCCL_PROTO set them (docs/collective-timing.md).
void add_library_choice_flags(CLI::App& command, std::string& algorithm, std::string& protocol);
// `--gpus-per-process N` / `--graph-launch`: how the program launches its collectives, as
// nccl-tests' -g and -G (cost_model::Fabric::gpus_per_process, graph_launch).
void add_launch_flags(CLI::App& command, std::optional<int>& gpus_per_process,
                      bool& graph_launch);
// The spec with them over its fabric's; spmd::Error when it has no fabric or the count does
// not fit one of its nodes.
sim::MachineSpec with_launch_flags(sim::MachineSpec spec, std::optional<int> gpus_per_process,
                                   bool graph_launch);
// Their values; spmd::Error naming the flag for a bad name. Empty values force nothing.
cost_model::LibraryChoice library_choice_from_flags(const std::string& algorithm,
                                                    const std::string& protocol);
// `--full-simulation`: carry every collective message by message (no closed-form fast path).
void add_full_simulation_flag(CLI::App& command, bool& full_simulation);
// `--fault KIND:FIELD=VALUE,...`, repeatable (sim/faults.h, docs/faults.md).
void add_fault_flag(CLI::App& command, std::vector<std::string>& faults);
// The spec with the --fault flags' faults added after its own; spmd::Error for bad ones.
sim::MachineSpec with_fault_flags(sim::MachineSpec spec, const std::vector<std::string>& faults);
// The simulator options the flags ask for: the algorithm and the fast path.
sim::SimOptions simulation_options(const MachineFlags& flags, sim::SimOptions options);
// --link-sharing's value: nothing when empty, else fair or fifo; spmd::Error otherwise.
std::optional<sim::LinkSharing> link_sharing_flag(const std::string& value);
// The machine; spmd::Error naming the flag and the expected form for bad values.
sim::MachineSpec machine_from_flags(const MachineFlags& flags);
// The same machine with `devices` devices: a preset as machine_preset_with_devices makes it; a
// machine file's topology rescaled (its kind must be one that `--topology` can name).
sim::MachineSpec machine_with_devices(const MachineFlags& flags, int devices);

}  // namespace spmd
