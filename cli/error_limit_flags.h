#pragma once
// `--max-median` and `--max-p90`: the limits on an error summary (validation/error_summary.h)
// that make `validate` and `perf --compare` exit 1 in CI.

#include <string_view>

#include "cli/cli11_fwd.h"
#include "validation/error_summary.h"

namespace spmd {

// The two flags; `over` names what the figures are over ("all rows", "the sizes").
void add_error_limit_flags(CLI::App& command, ErrorLimits& limits, std::string_view over);

}  // namespace spmd
