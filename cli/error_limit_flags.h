#pragma once
// `--max-median` and `--max-p90`: the limits on an error summary (validation/error_summary.h)
// that make `validate` and `perf --compare` exit 1 in CI.

#include <ostream>
#include <string_view>

#include "cli/cli11_fwd.h"
#include "validation/error_summary.h"

namespace spmd {

// The two flags; `over` names what the figures are over ("all rows", "the sizes").
void add_error_limit_flags(CLI::App& command, ErrorLimits& limits, std::string_view over);

// The command's exit code for `summary` under `limits`: 0 within them, else 1 with one line on
// `err` ("validate: p90 |error| 31.0% is above --max-p90 0.3 (30.0%)"); `items` as
// limits_exceeded takes it.
int exit_code_for_limits(const ErrorLimits& limits, const ErrorSummary& summary,
                         std::string_view items, std::string_view command, std::ostream& err);

}  // namespace spmd
