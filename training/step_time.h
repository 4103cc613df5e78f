#pragma once
// One training step's time on the slowest device, from the job's description alone
// (docs/training-model.md, "The step"): per micro-batch and layer, the GEMMs (by shape),
// the attention kernels, the element-wise kernels (by bytes) and each parallelism's
// communication with what overlaps it; then the pipeline (interleaved 1F1B, its bubble), the
// data-parallel or FSDP traffic the compute does not hide, and the optimizer step.
// Collectives are timed by the collective model (cost_model/collective_timing.h) on the fabric
// of the accelerator's machine preset.

#include "cost_model/fabric.h"
#include "training/training_job.h"

namespace spmd::training {

// Seconds, each the part of the step it adds (exposed communication only).
struct StepTime {
  double compute_s = 0;             // every micro-batch's kernels on the fullest stage
  double tensor_parallel_s = 0;     // TP collectives not hidden under GEMMs
  double context_parallel_s = 0;    // ring attention's K/V passes not hidden under attention
  double expert_parallel_s = 0;     // MoE token dispatch and combine
  double pipeline_bubble_s = 0;     // (p - 1) / v micro-batch times of the fullest stage
  double pipeline_transfer_s = 0;   // 1F1B's activation and gradient sends between stages
  double data_parallel_s = 0;       // gradient reduction, parameter gathers, FSDP, not hidden
  double activation_offload_s = 0;  // copies to and from host memory not hidden under compute
  double optimizer_s = 0;
  double total_s() const {
    return compute_s + tensor_parallel_s + context_parallel_s + expert_parallel_s +
           pipeline_bubble_s + pipeline_transfer_s + data_parallel_s + activation_offload_s +
           optimizer_s;
  }
  double communication_s() const {
    return tensor_parallel_s + context_parallel_s + expert_parallel_s + pipeline_transfer_s +
           data_parallel_s;
  }
};

// `job` must have passed check_training_job; `fabric` is the machine's.
StepTime predict_step(const TrainingJob& job, const cost_model::Fabric& fabric);

// The fabric of the accelerator's machine preset (spmd::Error naming a preset without one); a
// TPU's is unused (its collectives go over its ICI torus: training/ici_collectives.h).
cost_model::Fabric fabric_of(const Accelerator& accelerator);

}  // namespace spmd::training
