#pragma once
// Where a run's files go: the Chrome trace (trace.json), the reports (collectives.csv,
// devices.csv, report.json) in one folder, created if needed.

#include <string>

#include "sim/cost_log.h"

namespace spmd {

struct RunOutputs {
  std::string folder;
  std::string trace_path;
  std::string report_path;
};

// spmd::Error naming the path when a file cannot be written.
RunOutputs write_run_outputs(const std::string& folder, const sim::CostLog& log,
                             const std::string& machine_name, int devices);

}  // namespace spmd
