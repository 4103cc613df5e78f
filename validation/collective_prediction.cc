#include "validation/collective_prediction.h"

#include "validation/collective_range.h"

#include <fmt/format.h>

#include <algorithm>

#include "reference/error.h"
#include "validation/calibration_machine.h"
#include "validation/error_summary.h"

namespace spmd {
namespace {

// The machine a config's first row describes. A GPU no preset stands for is no error: its rows
// are listed as not predicted, so a file with other machines still gives its figures.
MachineRows machine_rows(const CalibrationRow& row) {
  MachineRows machine{row.config_id, row.line, row.machine, "", {}, "", {}};
  try {
    const CalibrationMachine inferred = calibration_machine(row.machine);
    machine.preset = inferred.preset;
    machine.fabric = inferred.fabric;
  } catch (const Error& e) {
    machine.not_predicted = e.what();
  }
  return machine;
}

}  // namespace

CollectivePrediction predict_row(const CalibrationRow& row, const cost_model::Fabric& fabric,
                                 const std::string& machine_not_predicted) {
  if (!machine_not_predicted.empty() || !row.not_predicted.empty()) {
    return {&row, {}, 0, std::nullopt,
            machine_not_predicted.empty() ? row.not_predicted : machine_not_predicted};
  }
  const cost_model::TimingRequest request{.op = row.op,
                                          .bytes = row.size_bytes,
                                          .ranks = row.machine.gpus_total,
                                          .element_bytes = row.element_bytes,
                                          .algorithm = row.forced_algorithm,
                                          .protocol = row.forced_protocol};
  // A run that forced CollNet shows that its network reduces (NCCL refuses CollNet otherwise);
  // the machine's description does not say so, so the row says it for itself.
  cost_model::Fabric row_fabric = fabric;
  if (row.forced_algorithm == cost_model::LibraryAlgorithm::collnet) {
    row_fabric.in_network_reduction = true;
  }
  // NVLS turned off (NCCL_NVLS_ENABLE=0) leaves the switches' reduction unused, unless the run
  // forced an NVLS algorithm, which then says it ran.
  const bool forced_nvls =
      row.forced_algorithm && cost_model::reduces_in_switches(*row.forced_algorithm);
  if (row.nvls_off && !forced_nvls) row_fabric.in_switch_reduction = false;
  row_fabric.gpus_per_process = row.launch.gpus_per_process;
  row_fabric.graph_launch = row.launch.graph_launch;
  CollectivePrediction prediction{&row, cost_model::time_collective(row_fabric, request), 0,
                                  std::nullopt, ""};
  prediction.predicted_us = static_cast<double>(prediction.choice.time_ps) / 1e6;
  if (row.measured_time_us) {
    prediction.error = relative_error(prediction.predicted_us, *row.measured_time_us);
  }
  return prediction;
}

std::vector<MachineRows> predictions_by_machine(const CsvTable& table,
                                                const std::vector<CalibrationRow>& rows) {
  std::vector<MachineRows> machines;
  std::map<std::string, std::size_t> index_of_config;
  for (const CalibrationRow& row : rows) {
    const std::string where = fmt::format("{}:{}", table.file_name(), row.line);
    const auto [found, added] = index_of_config.try_emplace(row.config_id, machines.size());
    try {
      if (added) machines.push_back(machine_rows(row));
      MachineRows& group = machines[found->second];
      if (group.machine != row.machine) {
        throw Error(fmt::format(
            "config_id {}: gpu, gpus_total, nodes, gpus_per_node, nic or what interconnect says of "
            "NVLink domains differ from line {}'s; "
            "expected one machine per config_id",
            row.config_id, group.first_line));
      }
      group.predictions.push_back(predict_row(row, group.fabric, group.not_predicted));
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", where, e.what()));
    }
  }
  return machines;
}

std::vector<double> errors_of(const MachineRows& machine) {
  std::vector<double> errors;
  for (const CollectivePrediction& p : machine.predictions) {
    if (p.error) errors.push_back(*p.error);
  }
  return errors;
}

std::vector<double> errors_of(const std::vector<MachineRows>& machines) {
  std::vector<double> errors;
  for (const MachineRows& machine : machines) {
    const std::vector<double> machine_errors = errors_of(machine);
    errors.insert(errors.end(), machine_errors.begin(), machine_errors.end());
  }
  return errors;
}

int skipped_rows(const MachineRows& machine) {
  return static_cast<int>(std::count_if(
      machine.predictions.begin(), machine.predictions.end(),
      [](const CollectivePrediction& p) { return !p.error && p.not_predicted.empty(); }));
}

int skipped_rows(const std::vector<MachineRows>& machines) {
  int skipped = 0;
  for (const MachineRows& machine : machines) skipped += skipped_rows(machine);
  return skipped;
}

std::map<OpAndScale, std::vector<double>> errors_by_op_and_scale(
    const std::vector<MachineRows>& machines) {
  std::map<OpAndScale, std::vector<double>> errors;
  for (const MachineRows& machine : machines) {
    for (const CollectivePrediction& p : machine.predictions) {
      if (!p.error) continue;
      errors[{p.row->op, machine.machine.nodes > 1}].push_back(*p.error);
    }
  }
  return errors;
}

std::map<std::string, int> not_predicted_reasons(const std::vector<MachineRows>& machines) {
  std::map<std::string, int> reasons;
  for (const MachineRows& machine : machines) {
    for (const CollectivePrediction& p : machine.predictions) {
      if (!p.not_predicted.empty()) ++reasons[machine.config_id + ": " + p.not_predicted];
    }
  }
  return reasons;
}

std::vector<std::pair<std::string, double>> family_errors(const std::vector<MachineRows>& machines) {
  std::vector<std::pair<std::string, double>> errors;
  for (const MachineRows& machine : machines) {
    for (const CollectivePrediction& p : machine.predictions) {
      if (p.error) {
        errors.emplace_back(collective_family(machine.fabric, machine.machine.nodes > 1), *p.error);
      }
    }
  }
  return errors;
}

}  // namespace spmd
