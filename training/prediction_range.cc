#include "training/prediction_range.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "validation/error_summary.h"

namespace spmd::training {

const std::vector<ErrorBand>& published_error_bands() {
  // `spmdsim validate ../shared/training/published_steps.csv --summary`, the family table, in
  // the families' order by name.
  static const std::vector<ErrorBand> bands = {
      {.family = "ampere", .rows = 21, .low = -0.151, .high = 0.099},
      {.family = "blackwell", .rows = 38, .low = -0.668, .high = 0.230},
      {.family = "hopper", .rows = 41, .low = -0.429, .high = 0.161},
  };
  return bands;
}

std::vector<ErrorBand> error_bands(const std::vector<std::pair<std::string, double>>& errors) {
  std::map<std::string, std::vector<double>> by_family;
  for (const auto& [family, error] : errors) by_family[family].push_back(error);
  std::vector<ErrorBand> bands;
  for (const auto& [family, values] : by_family) {
    // Each family present has at least one error, so both percentiles exist.
    const double p5 = *nearest_rank_percentile(values, 5);
    const double p95 = *nearest_rank_percentile(values, 95);
    bands.push_back(ErrorBand{.family = family,
                              .rows = static_cast<int>(values.size()),
                              // Widened to whole thousandths, so the printed and kept bands
                              // hold the rows on their edges.
                              .low = std::floor(p5 * 1000) / 1000,
                              .high = std::ceil(p95 * 1000) / 1000});
  }
  return bands;
}

StepRange step_range(std::string_view family, double predicted_s) {
  const std::vector<ErrorBand>& bands = published_error_bands();
  ErrorBand band{.low = 0, .high = 0};
  const auto same = std::find_if(bands.begin(), bands.end(),
                                 [&](const ErrorBand& b) { return b.family == family; });
  if (same != bands.end()) {
    band = *same;
  } else {
    for (const ErrorBand& b : bands) {
      band.low = std::min(band.low, b.low);
      band.high = std::max(band.high, b.high);
    }
  }
  return StepRange{.low_s = predicted_s / (1 + band.high), .high_s = predicted_s / (1 + band.low)};
}

}  // namespace spmd::training
