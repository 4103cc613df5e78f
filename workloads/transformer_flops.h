#pragma once
// The matmul FLOPs of a decoder-only transformer (docs/workload-format.md, "transformer"), as
// Narayanan et al. 2021 (arXiv 2104.04473, §5.1) and Korthikanti et al. 2022 (arXiv 2205.05198,
// §6) count them: a multiply-add is 2 FLOPs, only matmuls count, attention over the whole
// sequence (no causal halving). Per layer and sequence of s tokens, forward:
//   QKV projection   2·s·h·(h + 2·kv_width)      (kv_width = kv_heads · h / heads)
//   attention core   4·s²·h                       (Q·Kᵀ and scores·V)
//   output proj.     2·s·h²
//   MLP              2·s·h·f · (3 if gated else 2)
// which with kv_heads = heads and f = 4h is the papers' 24·s·h² + 4·s²·h; logits 2·s·h·V.
// The backward pass is twice the forward.

#include <cstdint>

#include "workloads/transformer_spec.h"

namespace spmd {

// One layer's forward FLOPs for `sequences` whole sequences, by part (not split over devices).
struct LayerFlops {
  double qkv = 0;
  double attention_core = 0;
  double output_projection = 0;
  double mlp = 0;
  double attention_block() const { return qkv + attention_core + output_projection; }
  double total() const { return attention_block() + mlp; }
};

LayerFlops layer_forward_flops(const TransformerSpec& spec, std::int64_t sequences);
double logits_forward_flops(const TransformerSpec& spec, std::int64_t sequences);

// The step's model FLOPs (forward and backward of every layer and the logits over the global
// batch, without recomputation): MFU's numerator.
double model_flops_per_step(const TransformerSpec& spec);

// Parameters of one layer (attention, MLP, two norms' scales), and of the embedding table (the
// output layer is as large, untied).
std::int64_t layer_parameters(const TransformerSpec& spec);
std::int64_t embedding_parameters(const TransformerSpec& spec);
std::int64_t model_parameters(const TransformerSpec& spec);

}  // namespace spmd
