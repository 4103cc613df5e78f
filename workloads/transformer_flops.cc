#include "workloads/transformer_flops.h"

namespace spmd {

LayerFlops layer_forward_flops(const TransformerSpec& spec, std::int64_t sequences) {
  const double tokens = static_cast<double>(sequences) * static_cast<double>(spec.sequence);
  const double s = static_cast<double>(spec.sequence);
  const double h = static_cast<double>(spec.d_model);
  const double f = static_cast<double>(spec.d_ff);
  const double kv = static_cast<double>(spec.kv_width());
  const double mlp_matrices = spec.gated_mlp ? 3.0 : 2.0;
  LayerFlops flops;
  flops.qkv = 2.0 * tokens * h * (h + 2.0 * kv);
  flops.attention_core = 4.0 * tokens * s * h;
  flops.output_projection = 2.0 * tokens * h * h;
  flops.mlp = 2.0 * tokens * h * f * mlp_matrices;
  return flops;
}

double logits_forward_flops(const TransformerSpec& spec, std::int64_t sequences) {
  return 2.0 * static_cast<double>(sequences) * static_cast<double>(spec.sequence) *
         static_cast<double>(spec.d_model) * static_cast<double>(spec.vocabulary);
}

double model_flops_per_step(const TransformerSpec& spec) {
  const double forward =
      static_cast<double>(spec.layers) * layer_forward_flops(spec, spec.global_batch).total() +
      logits_forward_flops(spec, spec.global_batch);
  return 3.0 * forward;  // forward + backward (twice the forward)
}

std::int64_t layer_parameters(const TransformerSpec& spec) {
  const std::int64_t h = spec.d_model, f = spec.d_ff;
  const std::int64_t attention = h * (h + 2 * spec.kv_width()) + h * h;
  const std::int64_t mlp = (spec.gated_mlp ? 3 : 2) * h * f;
  return attention + mlp + 2 * h;
}

std::int64_t embedding_parameters(const TransformerSpec& spec) {
  return spec.vocabulary * spec.d_model;
}

std::int64_t model_parameters(const TransformerSpec& spec) {
  return spec.layers * layer_parameters(spec) + 2 * embedding_parameters(spec) + spec.d_model;
}

}  // namespace spmd
