#pragma once
// Every row of a calibration file predicted by the protocol-level timing
// (cost_model/collective_timing.h) on the machine its words describe
// (validation/calibration_machine.h), grouped by machine, with the errors the accuracy goals are
// stated for: per machine, and by op and scale. `spmdsim validate` prints them
// (cli/validate_command.cc); docs/validation.md says how each part is derived.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cost_model/collective_timing.h"
#include "cost_model/fabric.h"
#include "support/csv_table.h"
#include "validation/calibration_row.h"

namespace spmd {

// One row predicted, or the reason it is not.
struct CollectivePrediction {
  const CalibrationRow* row = nullptr;
  cost_model::TimedChoice choice;
  double predicted_us = 0;
  std::optional<double> error;  // (predicted - measured) / measured; none without a measurement
  std::string not_predicted;    // why the model cannot predict the row; empty when it can
};

// The rows of one config_id: one machine.
struct MachineRows {
  std::string config_id;
  int first_line = 0;
  MachineDescription machine;
  std::string preset;
  cost_model::Fabric fabric;
  std::string not_predicted;  // why no machine could be inferred (a GPU without a preset)
  std::vector<CollectivePrediction> predictions;  // in file order, skipped rows included
};

// `row` on `fabric`, the machine its config_id describes, with the row's own settings (a forced
// algorithm or protocol, NVLS turned off, its launch); not predicted, with the reason, when the
// machine (`machine_not_predicted`) or the row cannot be.
CollectivePrediction predict_row(const CalibrationRow& row, const cost_model::Fabric& fabric,
                                 const std::string& machine_not_predicted);

// Every row predicted, grouped by config_id in the order each first appears. A GPU no preset
// stands for is no error: its rows are listed as not predicted. spmd::Error "FILE:LINE: ..." for
// a config_id whose rows describe different machines.
std::vector<MachineRows> predictions_by_machine(const CsvTable& table,
                                                const std::vector<CalibrationRow>& rows);

// The signed errors of the rows with a measurement, in file order.
std::vector<double> errors_of(const MachineRows& machine);
std::vector<double> errors_of(const std::vector<MachineRows>& machines);

// Rows without a measured figure (no time_us, algbw_GBps or busbw_GBps), which are predicted but
// not compared.
int skipped_rows(const MachineRows& machine);
int skipped_rows(const std::vector<MachineRows>& machines);

// The rows' errors by the two things the accuracy goals are stated for: the op a row is timed as
// and whether its GPUs are on one node or span several (the file's `nodes`; an NVL72 rack's
// trays count as nodes). Sorted by op, then one node before several, so printed in a fixed order.
struct OpAndScale {
  cost_model::TimedOp op;
  bool across_nodes;
  auto operator<=>(const OpAndScale&) const = default;
};
std::map<OpAndScale, std::vector<double>> errors_by_op_and_scale(
    const std::vector<MachineRows>& machines);

// The rows' (family, signed error) pairs (validation/collective_range.h), in file order.
std::vector<std::pair<std::string, double>> family_errors(const std::vector<MachineRows>& machines);

// Rows the model cannot predict, counted by "CONFIG_ID: REASON" (sorted, so printed in a fixed
// order).
std::map<std::string, int> not_predicted_reasons(const std::vector<MachineRows>& machines);

}  // namespace spmd
