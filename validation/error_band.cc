#include "validation/error_band.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "validation/error_summary.h"

namespace spmd {

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
                              .low = std::floor(p5 * 1000) / 1000,
                              .high = std::ceil(p95 * 1000) / 1000});
  }
  return bands;
}

ValueRange prediction_range(const std::vector<ErrorBand>& bands, std::string_view family,
                            double predicted) {
  ErrorBand band;
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
  return ValueRange{.low = predicted / (1 + band.high), .high = predicted / (1 + band.low)};
}

std::string error_band_table(const std::vector<ErrorBand>& bands) {
  std::string text = "| family | rows | 5th percentile error | 95th percentile error |\n"
                     "|---|---|---|---|\n";
  for (const ErrorBand& band : bands) {
    text += fmt::format("| {} | {} | {:+.3f} | {:+.3f} |\n", band.family, band.rows, band.low,
                        band.high);
  }
  return text;
}

}  // namespace spmd
