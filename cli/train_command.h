#pragma once
// `spmdsim train JOB.json`: one training step of a job described as a `training` workload
// (docs/workload-format.md, "training") predicted by the training model (training/): the step
// time and its range, its parts, tokens/s per GPU, MFU, and the fullest device's memory by part.

#include <ostream>
#include <string>

#include "cli/cli11_fwd.h"

namespace spmd {

struct TrainOptions {
  std::string workload;
};

void add_train_flags(CLI::App& command, TrainOptions& options);
int run_train_command(const TrainOptions& options, std::ostream& out);

}  // namespace spmd
