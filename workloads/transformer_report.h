#pragma once
// What `spmdsim run` prints for a `transformer` workload after the run's own figures: the step
// time, tokens per second, model FLOPs utilization, the exposed communication's share of the
// step, the pipeline bubble, and each part of the fullest device's memory against its capacity.

#include <cstdint>
#include <string>

#include "sim/machine_spec.h"
#include "workloads/transformer_spec.h"

namespace spmd {

struct TransformerStepFigures {
  double step_s = 0;
  double tokens_per_s = 0;
  // Model FLOPs (transformer_flops.h, no recomputation) / (devices x peak x step time).
  double model_flops_utilization = 0;
  double exposed_communication_share = 0;
  double bubble_fraction = 0;
};

TransformerStepFigures transformer_step_figures(const TransformerSpec& spec,
                                                const sim::MachineSpec& machine,
                                                std::int64_t step_ps,
                                                std::int64_t exposed_communication_ps);

// Lines ending in '\n'.
std::string transformer_step_report(const TransformerSpec& spec, const sim::MachineSpec& machine,
                                    std::int64_t step_ps, std::int64_t exposed_communication_ps);

}  // namespace spmd
