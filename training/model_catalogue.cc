#include "training/model_catalogue.h"

#include <string>
#include <vector>

#include "support/name_table.h"

namespace spmd::training {
namespace {

// DeepSeek-V3 and Kimi K2's MLA: q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128,
// qk_rope_head_dim 64, v_head_dim 128 (deepseek-ai/DeepSeek-V3 and moonshotai/Kimi-K2
// config.json).
constexpr LatentAttention kDeepSeekV3Attention{.q_lora_rank = 1536,
                                               .kv_lora_rank = 512,
                                               .qk_nope_head_dim = 128,
                                               .qk_rope_head_dim = 64,
                                               .v_head_dim = 128};

const std::vector<ModelFamily>& families() {
  static const std::vector<ModelFamily> table = {
      // first_k_dense_replace 3, intermediate_size 18432, n_shared_experts 1.
      {.name = "deepseek-v3", .latent_attention = kDeepSeekV3Attention, .dense_layers = 3,
       .dense_d_ff = 18432, .shared_experts = 1},
      // first_k_dense_replace 1, intermediate_size 18432, n_shared_experts 1.
      {.name = "kimi-k2", .latent_attention = kDeepSeekV3Attention, .dense_layers = 1,
       .dense_d_ff = 18432, .shared_experts = 1},
      // head_dim 64; sliding_window 128 on every second layer.
      {.name = "gpt-oss", .head_dim = 64, .sliding_window = 128,
       .sliding_window_layer_share = 0.5},
      {.name = "qwen3", .head_dim = 128},
      // Llama 4 Scout: one shared expert beside the routed one in every layer.
      {.name = "llama-4", .shared_experts = 1},
      {.name = "mixtral"},
      {.name = "gpt", .gated_mlp = false},
      {.name = "mpt", .gated_mlp = false},
      {.name = "bloom", .gated_mlp = false},
      // Nemotron-3 and -4 use squared-ReLU MLPs (two matrices) and a 256,000-token vocabulary
      // (NeMo's Nemotron configs).
      {.name = "nemotron", .gated_mlp = false, .vocabulary = 256000},
  };
  return table;
}

}  // namespace

ModelFamily model_family(std::string_view model_name) {
  const std::string lower = ascii_lowercase(model_name);
  for (const ModelFamily& family : families()) {
    if (lower.find(family.name) != std::string::npos) return family;
  }
  return ModelFamily{.name = "llama-like"};
}

}  // namespace spmd::training
