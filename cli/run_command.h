#pragma once
// `spmdsim run MACHINE WORKLOAD`: a built-in workload (docs/workload-format.md) or an XLA HLO
// module (a file whose text starts with "HloModule": docs/hlo-import.md) on a machine (preset or
// file); prints a summary and writes the trace and reports.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/cli11_fwd.h"
#include "hlo/hlo_program.h"

namespace spmd {

struct RunOptions {
  std::string machine;
  int devices = 0;  // -n: a preset made for this many, or a machine file rescaled; 0: as it is
  std::string workload;
  std::string out_folder = "spmdsim-out/run";
  std::string algorithm;
  std::string library_algorithm;  // --nccl-algo
  std::string protocol;           // --nccl-proto
  bool full_simulation = false;
  std::string placement = "auto";
  std::string link_sharing;  // fair or fifo; empty: the machine's
  std::vector<std::string> faults;  // --fault (sim/faults.h)
  std::optional<int> gpus_per_process;  // --gpus-per-process; none: the machine's
  bool graph_launch = false;            // --graph-launch
  bool keep_cpu_promotion = false;  // --keep-cpu-promotion: time XLA:CPU's f32 as compiled
  bool show_sharding = false;  // --show-sharding: an HLO module's inputs' and outputs' grids
  // Link messages recorded as the trace's arrows; beyond it the run says how many it dropped.
  std::int64_t trace_arrows = 200'000;
  // HLO modules: the fractions of peak FLOP/s and memory bandwidth their ops reach.
  double compute_efficiency = hlo::kDefaultComputeEfficiency;
  double memory_efficiency = hlo::kDefaultMemoryEfficiency;
};

void add_run_flags(CLI::App& command, RunOptions& options);
int run_run_command(const RunOptions& options, std::ostream& out);

}  // namespace spmd
