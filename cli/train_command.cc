#include "cli/train_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <vector>

#include "reference/error.h"
#include "training/training_prediction.h"
#include "training/training_workload.h"

namespace spmd {
namespace {

using training::StepTime;

void print_parts(const StepTime& step, std::ostream& out) {
  const std::vector<std::pair<std::string_view, double>> parts = {
      {"compute", step.compute_s},
      {"tensor parallel (exposed)", step.tensor_parallel_s},
      {"context parallel (exposed)", step.context_parallel_s},
      {"expert parallel", step.expert_parallel_s},
      {"pipeline bubble", step.pipeline_bubble_s},
      {"pipeline sends", step.pipeline_transfer_s},
      {"activation offload (exposed)", step.activation_offload_s},
      {"data parallel / FSDP (exposed)", step.data_parallel_s},
      {"optimizer", step.optimizer_s}};
  for (const auto& [name, seconds] : parts) {
    if (seconds <= 0) continue;
    out << fmt::format("  {:<31} {:>10.3f} s  {:>5.1f}%\n", name, seconds,
                       100 * seconds / step.total_s());
  }
}

}  // namespace

void add_train_flags(CLI::App& command, TrainOptions& options) {
  command.add_option("workload", options.workload,
                     "A training workload (JSON, kind \"training\": the published-steps columns, "
                     "docs/workload-format.md)")
      ->required();
}

int run_train_command(const TrainOptions& options, std::ostream& out) {
  const training::PublishedRun run = training::load_training_workload(options.workload);
  if (!run.job) {
    throw Error(fmt::format("{}: cannot be predicted: {}", options.workload, run.not_predicted));
  }
  const std::vector<training::PublishedRun> runs = {run};
  const training::TrainingPrediction p = training::predict_runs(runs).front();
  const training::TrainingJob& job = *run.job;
  const training::ParallelLayout& l = job.layout;
  out << fmt::format(
      "spmdsim train: {}: {} on {} x {} ({}), dp {} tp {} pp {} vp {} cp {} ep {} fsdp {}, {}, "
      "recompute {}, {} ({})\n",
      options.workload, run.model_name, run.devices, job.accelerator.name,
      job.accelerator.preset, l.data, l.tensor, l.pipeline, l.virtual_stages, l.context,
      l.expert, l.fsdp, training::precision_name(job.precision),
      training::recompute_name(job.recompute), training::framework_name(job.software.framework),
      job.micro_batches() == 1 ? "1 micro-batch" : fmt::format("{} micro-batches",
                                                                job.micro_batches()));
  out << fmt::format("step time: {:.3f} s, range {:.3g}-{:.3g} s", p.step->total_s(),
                     p.range.low, p.range.high);
  if (p.error) {
    out << fmt::format(" (published {:.3f} s: {:+.1f}%)", *run.measured_step_s, 100 * *p.error);
  }
  out << "\n";
  print_parts(*p.step, out);
  out << fmt::format("tokens/s per GPU: {:.0f}, MFU {:.1f}% of the {} peak\n",
                     p.tokens_per_s_per_gpu, 100 * p.model_flops_utilization,
                     training::precision_name(job.precision));
  const double capacity = job.accelerator.memory_bytes;
  out << fmt::format("memory per device: {:.1f} GB of {:.1f} GB{}: {}\n",
                     p.memory.total_bytes() / 1e9, capacity / 1e9,
                     p.memory.total_bytes() > capacity ? " (does not fit)" : "",
                     p.memory.parts_text());
  return 0;
}

}  // namespace spmd
