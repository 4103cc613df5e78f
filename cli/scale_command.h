#pragma once
// `spmdsim scale`: one workload at several device counts; a table and a PNG plot (gnuplot) of
// step time, throughput and scaling efficiency against the ideal line, exposed communication,
// busbw per mesh axis and memory per device against devices, titled with workload and machine.

#include <ostream>
#include <string>
#include <vector>

#include "cli/cli11_fwd.h"
#include "cli/machine_flags.h"

namespace spmd {

struct ScaleOptions {
  std::string workload;
  std::vector<int> devices = {8, 16, 32, 64};
  MachineFlags machine;
  std::string out_folder = "spmdsim-out/scale";
  bool plot = true;
  std::string placement = "auto";
};

void add_scale_flags(CLI::App& command, ScaleOptions& options);
int run_scale_command(const ScaleOptions& options, std::ostream& out);

}  // namespace spmd
