#include "training/prediction_range.h"

namespace spmd::training {

const std::vector<ErrorBand>& published_error_bands() {
  // `spmdsim validate ../shared/training/published_steps.csv --summary`, the family table, in
  // the families' order by name.
  static const std::vector<ErrorBand> bands = {
      {.family = "ampere", .rows = 21, .low = -0.124, .high = 0.099},
      {.family = "blackwell", .rows = 38, .low = -0.600, .high = 0.230},
      {.family = "hopper", .rows = 41, .low = -0.354, .high = 0.100},
  };
  return bands;
}

StepRange step_range(std::string_view family, double predicted_s) {
  return prediction_range(published_error_bands(), family, predicted_s);
}

}  // namespace spmd::training
