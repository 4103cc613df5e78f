#pragma once
// What one step of a workload processes, for throughput: tokens for language models, samples
// for the MLP, and the step itself for a list of collectives (which processes nothing).

#include <string>

#include "workloads/workload.h"

namespace spmd {

struct StepWork {
  double count = 1;
  std::string unit = "steps";  // "tokens", "samples" or "steps"
};

// The work of one step on `devices` devices (the batch grows with data parallelism).
StepWork work_per_step(const Workload& workload, int devices);

}  // namespace spmd
