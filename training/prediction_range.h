#pragma once
// How far to trust a training-step prediction (validation/error_band.h): the bands of the
// model's signed errors on the published training set per accelerator family ("ampere",
// "hopper", "blackwell", "tpu": accelerator_family()).

#include <string_view>
#include <vector>

#include "validation/error_band.h"

namespace spmd::training {

// The bands the model has now, measured by `spmdsim validate` on the published set (its
// `--summary` prints them; tests/training_validate_test.cc holds these to it).
const std::vector<ErrorBand>& published_error_bands();

using StepRange = ValueRange;  // seconds

// The range of a prediction for an accelerator of `family`.
StepRange step_range(std::string_view family, double predicted_s);

}  // namespace spmd::training
