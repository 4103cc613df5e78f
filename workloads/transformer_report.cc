#include "workloads/transformer_report.h"

#include <fmt/format.h>

#include "workloads/transformer_flops.h"
#include "workloads/transformer_memory.h"
#include "workloads/transformer_step.h"

namespace spmd {

TransformerStepFigures transformer_step_figures(const TransformerSpec& spec,
                                                const sim::MachineSpec& machine,
                                                std::int64_t step_ps,
                                                std::int64_t exposed_communication_ps) {
  TransformerStepFigures figures;
  figures.step_s = static_cast<double>(step_ps) / 1e12;
  figures.bubble_fraction = pipeline_bubble_fraction(spec);
  if (step_ps <= 0) return figures;
  const double tokens = static_cast<double>(spec.global_batch) * static_cast<double>(spec.sequence);
  figures.tokens_per_s = tokens / figures.step_s;
  figures.model_flops_utilization =
      model_flops_per_step(spec) /
      (static_cast<double>(machine.devices) * machine.peak_flops_per_s * figures.step_s);
  figures.exposed_communication_share =
      static_cast<double>(exposed_communication_ps) / static_cast<double>(step_ps);
  return figures;
}

std::string transformer_step_report(const TransformerSpec& spec, const sim::MachineSpec& machine,
                                    std::int64_t step_ps, std::int64_t exposed_communication_ps) {
  const TransformerStepFigures f =
      transformer_step_figures(spec, machine, step_ps, exposed_communication_ps);
  const int stage = fullest_stage(spec);
  const TransformerMemory memory = stage_memory(spec, stage);
  std::string text = fmt::format(
      "transformer: {:.3g} parameters; data {} x fsdp {} x tensor {} x pipeline {} x context {}; "
      "{} micro-batches of {} per replica; recompute {}\n",
      static_cast<double>(model_parameters(spec)), spec.data, spec.fsdp, spec.tensor,
      spec.pipeline, spec.context, spec.micro_batches(), spec.micro_batch_size,
      recompute_name(spec.recompute));
  text += fmt::format(
      "  step {:.4g} s, {:.4g} tokens/s, MFU {:.1f}% (model FLOPs {:.3g} per step at {:.0f}% "
      "matmul efficiency)\n",
      f.step_s, f.tokens_per_s, 100 * f.model_flops_utilization, model_flops_per_step(spec),
      100 * spec.matmul_efficiency);
  text += fmt::format(
      "  exposed communication {:.1f}% of the step; pipeline bubble (p-1)/(m+p-1) = {:.1f}%\n",
      100 * f.exposed_communication_share, 100 * f.bubble_fraction);
  text += fmt::format("  memory per device (stage {}, the fullest): {} of {}: {}\n", stage,
                      gigabytes_text(memory.total()),
                      gigabytes_text(static_cast<double>(machine.memory_bytes)),
                      memory.parts_text());
  return text;
}

}  // namespace spmd
