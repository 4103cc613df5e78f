#include "training/training_prediction.h"

#include <map>
#include <string>

namespace spmd::training {

std::vector<TrainingPrediction> predict_runs(const std::vector<PublishedRun>& runs) {
  std::map<std::string, cost_model::Fabric> fabrics;  // by preset, built once
  std::vector<TrainingPrediction> predictions;
  for (const PublishedRun& run : runs) {
    TrainingPrediction prediction{.run = &run};
    if (run.job) {
      const TrainingJob& job = *run.job;
      auto [at, inserted] = fabrics.try_emplace(job.accelerator.preset);
      if (inserted) at->second = fabric_of(job.accelerator);
      prediction.step = predict_step(job, at->second);
      const double step_s = prediction.step->total_s();
      const double tokens =
          static_cast<double>(job.batch.global_sequences) * static_cast<double>(job.batch.sequence);
      prediction.tokens_per_s_per_gpu = tokens / step_s / run.devices;
      prediction.model_flops_utilization =
          prediction.tokens_per_s_per_gpu * model_flops_per_token(job.model, job.batch.sequence) /
          job.accelerator.peak_flops_per_s(job.precision);
      prediction.range = step_range(accelerator_family(job.accelerator), step_s);
      prediction.memory = peak_memory(job);
      if (run.measured_step_s) {
        prediction.error = (step_s - *run.measured_step_s) / *run.measured_step_s;
      }
    }
    predictions.push_back(prediction);
  }
  return predictions;
}

std::vector<ErrorBand> error_bands_of(const std::vector<TrainingPrediction>& predictions) {
  std::vector<std::pair<std::string, double>> errors;  // (family, signed error)
  for (const TrainingPrediction& p : predictions) {
    if (p.error) errors.emplace_back(accelerator_family(p.run->job->accelerator), *p.error);
  }
  return error_bands(errors);
}

}  // namespace spmd::training
