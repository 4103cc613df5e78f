#pragma once
// A published run predicted by the step model (training/step_time.h): the step time and its
// parts, tokens/s per GPU and MFU as Megatron counts model FLOPs, and the error against the
// published step time where the row gives one.

#include <optional>
#include <vector>

#include "training/prediction_range.h"
#include "training/published_run.h"
#include "training/step_time.h"
#include "training/training_memory.h"

namespace spmd::training {

struct TrainingPrediction {
  const PublishedRun* run = nullptr;
  std::optional<StepTime> step;  // none: not predicted (run->not_predicted says why)
  StepRange range;               // where the step should lie, from the model's published errors
  TrainingMemory memory;         // the fullest device's
  double tokens_per_s_per_gpu = 0;
  // Model FLOPs / (step · GPUs · the matmul precision's peak), as NVIDIA's tables divide FP8 runs
  // by the FP8 peak.
  double model_flops_utilization = 0;
  std::optional<double> error;          // (predicted - published) / published
};

// One prediction per run, in the runs' order; `runs` must outlive them.
std::vector<TrainingPrediction> predict_runs(const std::vector<PublishedRun>& runs);

// The error bands of the predictions that have a published step (prediction_range.h).
std::vector<ErrorBand> error_bands_of(const std::vector<TrainingPrediction>& predictions);

}  // namespace spmd::training
