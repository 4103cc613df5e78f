#pragma once
// What a model's name says about its shape beyond the published columns (docs/training-model.md,
// "Model families"): each family's public configuration (Hugging Face config.json, the
// frameworks' model classes). A table row gives layers, widths, heads, vocabulary and experts;
// the family adds the MLP kind, a head width that is not d_model / heads, latent attention,
// leading dense layers, shared experts and sliding windows.

#include <cstdint>
#include <optional>
#include <string_view>

#include "training/model_shape.h"

namespace spmd::training {

struct ModelFamily {
  std::string_view name;
  bool gated_mlp = true;
  std::int64_t head_dim = 0;  // 0: d_model / heads
  std::optional<LatentAttention> latent_attention;
  std::int64_t dense_layers = 0;
  std::int64_t dense_d_ff = 0;
  std::int64_t shared_experts = 0;
  std::int64_t sliding_window = 0;
  double sliding_window_layer_share = 0;
  std::int64_t vocabulary = 0;  // where a table leaves it out; 0: GPT-2's padded 51,200
};

// The family whose name the model's name contains (case-insensitive, "DeepSeek-V3-671B" is
// DeepSeek-V3); a Llama-like default (SwiGLU, d_model / heads wide heads) otherwise, and GPT's
// two-matrix MLP for GPT, MPT, BLOOM and Nemotron models.
ModelFamily model_family(std::string_view model_name);

}  // namespace spmd::training
