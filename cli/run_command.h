#pragma once
// `spmdsim run MACHINE WORKLOAD`: a built-in workload (docs/workload-format.md) on a machine
// (preset or file); prints a summary and writes the trace and reports.

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace spmd {

struct RunOptions {
  std::string machine;
  int devices = 0;  // -n: the preset at this many devices; 0: its own count
  std::string workload;
  std::string out_folder = "spmdsim-out/run";
  std::string algorithm;
  std::string library_algorithm;  // --nccl-algo
  std::string protocol;           // --nccl-proto
  bool full_simulation = false;
  std::string placement = "auto";
  std::string link_sharing;  // fair or fifo; empty: the machine's
  std::vector<std::string> faults;  // --fault (sim/faults.h)
};

void add_run_flags(CLI::App& command, RunOptions& options);
int run_run_command(const RunOptions& options, std::ostream& out);

}  // namespace spmd
