#include "cli/error_limit_flags.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

namespace spmd {

void add_error_limit_flags(CLI::App& command, ErrorLimits& limits, std::string_view over) {
  command
      .add_option_function<double>(
          "--max-median", [&limits](const double& v) { limits.max_median = v; },
          fmt::format("Exit 1 if the median |error| over {} is above this fraction (0.2 is 20%)",
                      over))
      ->check(CLI::NonNegativeNumber);
  command
      .add_option_function<double>(
          "--max-p90", [&limits](const double& v) { limits.max_p90 = v; },
          fmt::format("Exit 1 if the p90 |error| over {} is above this fraction", over))
      ->check(CLI::NonNegativeNumber);
}

int exit_code_for_limits(const ErrorLimits& limits, const ErrorSummary& summary,
                         std::string_view items, std::string_view command, std::ostream& err) {
  const std::string exceeded = limits_exceeded(limits, summary, items);
  if (exceeded.empty()) return 0;
  err << command << ": " << exceeded << "\n";
  return 1;
}

}  // namespace spmd
