#pragma once
// How far to trust a collective's predicted time (validation/error_band.h): the bands of the
// protocol-level timing's signed errors on the published calibration set, per family: the GPU
// generation, on one node or across several ("hopper, one node").

#include <string>
#include <vector>

#include "cost_model/fabric.h"
#include "validation/error_band.h"

namespace spmd {

std::string collective_family(const cost_model::Fabric& fabric, bool across_nodes);

// The bands the model has now, measured by `spmdsim validate` on the published calibration set
// (its `--summary` prints them; tests/validate_command_test.cc holds these to it).
const std::vector<ErrorBand>& published_collective_bands();

// The range of a collective predicted to take `predicted_us` on `fabric`.
ValueRange collective_time_range(const cost_model::Fabric& fabric, bool across_nodes,
                                 double predicted_us);

}  // namespace spmd
