#pragma once
// Where a run's files go: the Chrome trace (trace.json), the reports (collectives.csv,
// devices.csv, report.json) in one folder, created if needed.

#include <string>

#include "sim/cost_log.h"
#include "sim/machine.h"

namespace spmd {

struct RunOutputs {
  std::string folder;
  std::string trace_path;
  std::string report_path;
};

// spmd::Error naming the path when a file cannot be written.
// The trace groups device tracks as the machine's topology suggests (traces/track_groups.h).
RunOutputs write_run_outputs(const std::string& folder, const sim::CostLog& log,
                             const sim::Machine& machine);

// "trace: arrows for the first 200,000 of 1,234,567 link messages (...)" when the run recorded
// fewer messages than its links carried; empty when every message has its arrow.
std::string dropped_arrows_line(const sim::CostLog& log, const std::string& flag_hint);

}  // namespace spmd
