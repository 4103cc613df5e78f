#include "validation/calibration_output.h"

#include <fmt/format.h>

#include <utility>

#include "reference/check.h"
#include "validation/nccl_type_names.h"

namespace spmd {

CalibrationOutput calibration_output(const std::string& path, const NcclTestsLog& log,
                                     const std::string& op_name, cost_model::TimedOp op,
                                     sim::MachineSpec machine, const cost_model::Fabric& launched) {
  SPMD_CHECK(log.ranks.has_value(), fmt::format("{}: no ranks", path));
  SPMD_CHECK(machine.fabric.has_value(), fmt::format("{}: no fabric", path));
  CalibrationOutput output{.path = path,
                           .op = op_name,
                           .ranks = *log.ranks,
                           .nodes = cost_model::nodes_of(*machine.fabric, *log.ranks),
                           .machine = std::move(machine),
                           .fabric = launched};
  for (const NcclTestsResult& result : log.results) {
    output.requests.push_back({.op = op,
                               .bytes = result.size_bytes,
                               .ranks = *log.ranks,
                               .element_bytes = nccl_type_bytes(result.type).value_or(4)});
    output.measured_us.push_back(result.time_us);
  }
  return output;
}

std::vector<double> predicted_us(const CalibrationOutput& output,
                                 const cost_model::MeasuredTiming& measured) {
  cost_model::Fabric fabric = output.fabric;
  fabric.measured = measured;
  std::vector<double> times_us;
  for (const cost_model::TimingRequest& request : output.requests) {
    times_us.push_back(static_cast<double>(cost_model::time_collective(fabric, request).time_ps) /
                       1e6);
  }
  return times_us;
}

ErrorSummary output_error_summary(const CalibrationOutput& output,
                                  const cost_model::MeasuredTiming& measured) {
  const std::vector<double> times_us = predicted_us(output, measured);
  std::vector<double> errors;
  for (std::size_t row = 0; row < times_us.size(); ++row) {
    errors.push_back(relative_error(times_us[row], output.measured_us[row]));
  }
  return summarize_errors(errors);
}

}  // namespace spmd
