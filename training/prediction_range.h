#pragma once
// How far to trust a training-step prediction (docs/training-model.md, "Range"): the spread of
// the model's signed errors on the published training set for predictions of the same family
// (the accelerator's family: its GPU generation, or TPU), from its 5th to its 95th percentile. A prediction P whose
// family erred between e_low and e_high on published runs puts the real step between
// P / (1 + e_high) and P / (1 + e_low).

#include <string_view>
#include <vector>

#include <string>
#include <utility>

#include "training/training_job.h"

namespace spmd::training {

struct ErrorBand {
  std::string family;     // accelerator_family(): "ampere", "hopper", "blackwell", "tpu"
  int rows = 0;          // published rows the band was measured on
  double low = 0;        // 5th percentile of (predicted - published) / published
  double high = 0;       // 95th percentile
};

// The bands the model has now, measured by `spmdsim validate` on the published set (its
// `--summary` prints them; tests/training_validate_test.cc holds these to it).
const std::vector<ErrorBand>& published_error_bands();

// The bands of a set of (family, signed error) pairs, one per family present, in the families'
// order by name; nearest-rank percentiles (validation/error_summary.h).
std::vector<ErrorBand> error_bands(const std::vector<std::pair<std::string, double>>& errors);

struct StepRange {
  double low_s = 0;
  double high_s = 0;
  bool contains(double step_s) const { return step_s >= low_s && step_s <= high_s; }
};

// The range of a prediction for an accelerator of `family`; a family without a band takes the
// widest band of all.
StepRange step_range(std::string_view family, double predicted_s);

}  // namespace spmd::training
