#include "workloads/transformer_memory.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/sim_errors.h"
#include "workloads/transformer_flops.h"

namespace spmd {
namespace {

double width(DType dtype) { return static_cast<double>(dtype_size_bytes(dtype)); }

// Parameters on one device of `stage`.
double stage_parameters(const TransformerSpec& spec, int stage) {
  double params = static_cast<double>(spec.layers_per_stage()) *
                  static_cast<double>(layer_parameters(spec));
  const double table = static_cast<double>(embedding_parameters(spec));
  if (stage == 0) params += table;                  // input embedding
  if (stage == spec.pipeline - 1) params += table;  // output layer (untied)
  return params / spec.tensor / spec.fsdp;
}

// Korthikanti et al. §4.1, term by term, for b sequences of s local tokens attending to S keys,
// e bytes per element, t-way tensor parallelism. Masks are one byte per element.
double activation_bytes(const TransformerSpec& spec, double e) {
  const double b = static_cast<double>(spec.micro_batch_size);
  const double s = static_cast<double>(spec.sequence / spec.context);
  const double keys = static_cast<double>(spec.sequence);
  const double h = static_cast<double>(spec.d_model);
  const double f = static_cast<double>(spec.d_ff);
  const double kv = static_cast<double>(spec.kv_width());
  const double a = static_cast<double>(spec.heads);
  const double t = static_cast<double>(spec.tensor);
  const double sbh = s * b * h;
  const double sequence_split = spec.sequence_parallel ? t : 1.0;
  if (spec.recompute == Recompute::full) return e * sbh / sequence_split;  // the layer's input
  // Outside the tensor-parallel regions: two LayerNorm inputs (2e), the QKV and MLP inputs
  // (2e), two dropout masks (2): 10·sbh in 16-bit types; split over t only with sequence
  // parallelism.
  const double outside = (4.0 * e + 2.0) * sbh / sequence_split;
  // Inside: Q, K, V and the output projection's input; the MLP's activation input and output
  // (gated: gate, up and their product).
  const double mlp_tensors = spec.gated_mlp ? 3.0 : 2.0;
  const double inside = e * (2.0 * sbh + 2.0 * s * b * kv + mlp_tensors * s * b * f) / t;
  // Softmax output (e), its dropout mask (1) and dropout output (e): 5·a·s²·b in 16-bit types.
  const double scores =
      spec.recompute == Recompute::selective ? 0.0 : (2.0 * e + 1.0) * a * s * keys * b / t;
  return outside + inside + scores;
}

}  // namespace

double layer_activation_bytes(const TransformerSpec& spec) {
  return activation_bytes(spec, width(spec.dtype));
}

TransformerMemory stage_memory(const TransformerSpec& spec, int stage) {
  const double params = stage_parameters(spec, stage);
  const double e = width(spec.dtype);
  const bool mixed_precision = spec.dtype != DType::float32;
  TransformerMemory memory;
  memory.weights = params * e;
  memory.gradients = params * e;
  double optimizer_bytes_per_param = mixed_precision ? 4.0 : 0.0;  // fp32 master weights
  if (spec.optimizer == Optimizer::adam) optimizer_bytes_per_param += 2.0 * width(spec.optimizer_state_dtype);
  memory.optimizer_states =
      params * optimizer_bytes_per_param / (spec.distributed_optimizer ? spec.data : 1);
  if (spec.fsdp > 1) {
    memory.gathered_weights = 2.0 * static_cast<double>(layer_parameters(spec)) / spec.tensor * e;
  }
  // 1F1B: stage s has run p - s forwards before its first backward.
  memory.micro_batches_in_flight =
      std::min<std::int64_t>(spec.micro_batches(), spec.pipeline - stage);
  memory.activations = layer_activation_bytes(spec) *
                       static_cast<double>(spec.layers_per_stage()) *
                       static_cast<double>(memory.micro_batches_in_flight);
  if (stage == spec.pipeline - 1) {
    // The loss's fp32 logits for one micro-batch (Korthikanti et al. §4.3: 4·s·b·V/t).
    memory.activations += 4.0 * static_cast<double>(spec.micro_batch_tokens()) *
                          static_cast<double>(spec.vocabulary) / spec.tensor;
  }
  return memory;
}

int fullest_stage(const TransformerSpec& spec) {
  int fullest = 0;
  for (int stage = 1; stage < spec.pipeline; ++stage) {
    if (stage_memory(spec, stage).total() > stage_memory(spec, fullest).total()) fullest = stage;
  }
  return fullest;
}

std::string gigabytes_text(double bytes) { return fmt::format("{:.1f} GB", bytes / 1e9); }

std::string TransformerMemory::parts_text() const {
  std::string text = fmt::format("weights {}, gradients {}, optimizer states {}, ",
                                 gigabytes_text(weights), gigabytes_text(gradients),
                                 gigabytes_text(optimizer_states));
  if (gathered_weights > 0) {
    text += fmt::format("FSDP gathered weights {}, ", gigabytes_text(gathered_weights));
  }
  text += fmt::format("activations {} ({} micro-batch{} in flight)", gigabytes_text(activations),
                      micro_batches_in_flight, micro_batches_in_flight == 1 ? "" : "es");
  return text;
}

void check_transformer_fits(const TransformerSpec& spec, std::int64_t capacity_bytes) {
  const int stage = fullest_stage(spec);
  const TransformerMemory memory = stage_memory(spec, stage);
  if (memory.total() <= static_cast<double>(capacity_bytes)) return;
  // Mesh devices are numbered pipeline-major (transformer_mesh): the stage's first device.
  const std::int64_t device = static_cast<std::int64_t>(stage) * (spec.devices() / spec.pipeline);
  throw sim::OutOfMemoryError(fmt::format(
      "out of memory: transformer device {} (pipeline stage {}) needs {} ({}) but has {}", device,
      stage, gigabytes_text(memory.total()), memory.parts_text(),
      gigabytes_text(static_cast<double>(capacity_bytes))));
}

}  // namespace spmd
