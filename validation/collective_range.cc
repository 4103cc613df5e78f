#include "validation/collective_range.h"

namespace spmd {

std::string collective_family(const cost_model::Fabric& fabric, bool across_nodes) {
  return std::string(cost_model::generation_name(fabric.generation)) +
         (across_nodes ? ", several nodes" : ", one node");
}

const std::vector<ErrorBand>& published_collective_bands() {
  // `spmdsim validate ../shared/calibration/measurements.csv --summary`, the family table.
  static const std::vector<ErrorBand> bands = {
      {.family = "ampere, one node", .rows = 54, .low = -0.202, .high = 0.223},
      {.family = "blackwell, one node", .rows = 32, .low = -0.422, .high = 0.062},
      {.family = "blackwell, several nodes", .rows = 19, .low = -0.348, .high = 0.135},
      {.family = "cdna3, one node", .rows = 31, .low = -0.212, .high = 0.071},
      {.family = "hopper, one node", .rows = 201, .low = -0.175, .high = 0.140},
      {.family = "hopper, several nodes", .rows = 120, .low = -0.537, .high = 0.185},
  };
  return bands;
}

ValueRange collective_time_range(const cost_model::Fabric& fabric, bool across_nodes,
                                 double predicted_us) {
  return prediction_range(published_collective_bands(), collective_family(fabric, across_nodes),
                          predicted_us);
}

}  // namespace spmd
