#pragma once
// How far predictions are from measurements, summed up over a set of rows: the median and the
// 90th percentile of |error| and the share of rows within 10%, where
//   error = (predicted - measured) / measured.
// Percentiles are nearest-rank: the p-th percentile of n values is the value at rank ceil(p n)
// (from 1) of the sorted values, so the median of 4 values is the 2nd smallest and the p90 of 10
// values the 9th. docs/validation.md defines the same.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spmd {

struct ErrorSummary {
  int rows = 0;
  std::optional<double> median_abs_error;  // none without rows
  std::optional<double> p90_abs_error;
  std::optional<double> share_within_10_percent;
};

// (predicted - measured) / measured; measured must be positive.
double relative_error(double predicted, double measured);
// The nearest-rank `percent`-th percentile (0 < percent <= 100) of `values`; none when empty.
std::optional<double> nearest_rank_percentile(std::vector<double> values, int percent);
// `errors` are signed relative errors.
ErrorSummary summarize_errors(const std::vector<double>& errors);

// "12.3%" for 0.123; "-" for none.
std::string percent_text(std::optional<double> fraction);

// Limits on a summary for CI, as fractions (0.2 is 20%): `--max-median` and `--max-p90`
// (cli/error_limit_flags.h).
struct ErrorLimits {
  std::optional<double> max_median;
  std::optional<double> max_p90;
};
// One line saying which limits `summary` is above ("p90 |error| 31.0% is above --max-p90 0.3
// (30.0%)"), or that it has nothing to compare (`items`: "row", "size"); empty when within them.
std::string limits_exceeded(const ErrorLimits& limits, const ErrorSummary& summary,
                            std::string_view items);

}  // namespace spmd
