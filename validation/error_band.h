#pragma once
// How far to trust a prediction (docs/validation.md, "Ranges"): the spread of the model's signed
// errors, (predicted - measured) / measured, on a published set for predictions of the same
// family, from the 5th to the 95th percentile. A prediction P whose family erred between e_low
// and e_high puts the real value between P / (1 + e_high) and P / (1 + e_low). The training
// model's families are accelerators (training/prediction_range.h), the collective model's a GPU
// generation on one node or several (validation/collective_range.h).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spmd {

struct ErrorBand {
  std::string family;
  int rows = 0;     // published rows the band was measured on
  double low = 0;   // 5th percentile of the signed errors, rounded down to a thousandth
  double high = 0;  // 95th percentile, rounded up to a thousandth
};

// The bands of (family, signed error) pairs: one per family present, in the families' order by
// name; nearest-rank percentiles (validation/error_summary.h), widened to whole thousandths so
// that printed and kept bands hold the rows on their edges.
std::vector<ErrorBand> error_bands(const std::vector<std::pair<std::string, double>>& errors);

struct ValueRange {
  double low = 0;
  double high = 0;
  bool contains(double value) const { return value >= low && value <= high; }
};

// The range of `predicted` for `family` under `bands`; a family without a band takes the widest
// of them all.
ValueRange prediction_range(const std::vector<ErrorBand>& bands, std::string_view family,
                            double predicted);

// "| family | rows | 5th percentile error | 95th percentile error |" and a row per band, as
// validate --summary prints them (and the code keeps them).
std::string error_band_table(const std::vector<ErrorBand>& bands);

}  // namespace spmd
