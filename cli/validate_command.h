#pragma once
// `spmdsim validate FILE.csv`: every row of a calibration file (collectives timed on real
// machines, the machine described in words) predicted by the protocol-level timing
// (cost_model/collective_timing.h) on the machine its words describe
// (validation/collective_prediction.h), printed beside the measurement per machine with the
// median and p90 of |error|; optionally plotted, and checked against limits for CI. A file of
// published training runs goes to cli/validate_training.h. docs/validation.md says how each part
// is derived.

#include <optional>
#include <ostream>
#include <string>

#include "cli/cli11_fwd.h"
#include "validation/error_summary.h"

namespace spmd {

struct ValidateOptions {
  std::string file;
  bool summary = false;  // only the per-machine table (markdown)
  std::string plot_dir;  // empty: no plots
  ErrorLimits limits;
};

void add_validate_flags(CLI::App& command, ValidateOptions& options);
// 0, or 1 when the overall median or p90 of |error| is above its limit (one line on `err`).
int run_validate_command(const ValidateOptions& options, std::ostream& out, std::ostream& err);

}  // namespace spmd
