#include "validation/error_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reference/check.h"

namespace spmd {

double relative_error(double predicted, double measured) {
  SPMD_CHECK(measured > 0, fmt::format("measured {}", measured));
  return (predicted - measured) / measured;
}

std::optional<double> nearest_rank_percentile(std::vector<double> values, int percent) {
  SPMD_CHECK(percent > 0 && percent <= 100, fmt::format("percentile {}", percent));
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  // ceil(percent n / 100) in integers: no rounding (0.9 * 10 is 9.000000000000002 in doubles).
  const std::size_t rank = (static_cast<std::size_t>(percent) * values.size() + 99) / 100;
  return values[rank - 1];
}

ErrorSummary summarize_errors(const std::vector<double>& errors) {
  std::vector<double> absolute;
  for (double error : errors) absolute.push_back(std::abs(error));
  ErrorSummary summary{static_cast<int>(errors.size()), nearest_rank_percentile(absolute, 50),
                       nearest_rank_percentile(absolute, 90), std::nullopt};
  if (!absolute.empty()) {
    const auto within =
        std::count_if(absolute.begin(), absolute.end(), [](double e) { return e <= 0.10; });
    summary.share_within_10_percent =
        static_cast<double>(within) / static_cast<double>(absolute.size());
  }
  return summary;
}

std::string percent_text(std::optional<double> fraction) {
  return fraction ? fmt::format("{:.1f}%", 100 * *fraction) : std::string("-");
}

std::string limits_exceeded(const ErrorLimits& limits, const ErrorSummary& summary,
                            std::string_view items) {
  std::vector<std::string> failures;
  const auto check = [&](std::string_view name, std::optional<double> limit,
                         std::optional<double> value, std::string_view flag) {
    if (!limit) return;
    if (!value) {
      failures.push_back(
          fmt::format("no {} has a measured time to compare with {} {}", items, flag, *limit));
    } else if (*value > *limit) {
      failures.push_back(fmt::format("{} |error| {} is above {} {} ({})", name, percent_text(value),
                                     flag, *limit, percent_text(limit)));
    }
  };
  check("median", limits.max_median, summary.median_abs_error, "--max-median");
  check("p90", limits.max_p90, summary.p90_abs_error, "--max-p90");
  std::string message;
  for (const std::string& failure : failures) message += (message.empty() ? "" : "; ") + failure;
  return message;
}

}  // namespace spmd
