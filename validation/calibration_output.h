#pragma once
// One nccl-tests or rccl-tests output that `spmdsim calibrate` fits a machine's timing to
// (docs/calibrate.md), read for the closed-form timing: each measured size as a request on the
// machine's fabric with the output's launch (-g, -G), beside its measured time.

#include <string>
#include <vector>

#include "cost_model/collective_timing.h"
#include "cost_model/fabric.h"
#include "sim/machine_spec.h"
#include "validation/error_summary.h"
#include "validation/nccl_tests_log.h"

namespace spmd {

struct CalibrationOutput {
  std::string path;
  std::string op;  // perf's name: "all_reduce"
  int ranks = 0;
  int nodes = 0;
  sim::MachineSpec machine;    // the machine on the output's ranks, as given
  cost_model::Fabric fabric;   // its fabric with the output's launch
  std::vector<cost_model::TimingRequest> requests;
  std::vector<double> measured_us;
};

// `log`'s sizes as requests of `op` (perf's name `op_name`) on its ranks: `machine` is the
// machine on those ranks, `launched` its fabric with the output's launch. The log must say its
// ranks, and the machine have a fabric.
CalibrationOutput calibration_output(const std::string& path, const NcclTestsLog& log,
                                     const std::string& op_name, cost_model::TimedOp op,
                                     sim::MachineSpec machine, const cost_model::Fabric& launched);

// Each size of the output predicted with `measured`, in the output's order.
std::vector<double> predicted_us(const CalibrationOutput& output,
                                 const cost_model::MeasuredTiming& measured);

// The output's sizes predicted with `measured` against their measured times.
ErrorSummary output_error_summary(const CalibrationOutput& output,
                                  const cost_model::MeasuredTiming& measured);

}  // namespace spmd
