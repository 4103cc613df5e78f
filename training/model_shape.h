#pragma once
// A decoder-only transformer's shape as a training step sees it (docs/training-model.md,
// "The model"): widths, attention kind (multi-head, grouped-query, DeepSeek's multi-head latent
// attention, sliding windows), dense or mixture-of-experts MLPs, and the FLOPs and parameters
// each part has per token. Everything here is per whole model: no parallelism yet.

#include <cstdint>
#include <optional>
#include <string_view>

namespace spmd::training {

// DeepSeek's multi-head latent attention (arXiv 2405.04434, §2.1): queries and keys/values go
// through low-rank projections; each head's key has a part without and a part with RoPE.
struct LatentAttention {
  std::int64_t q_lora_rank = 0;  // 0: queries projected directly from the hidden state
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
};

struct MixtureOfExperts {
  std::int64_t experts = 0;          // routed experts per MoE layer
  std::int64_t top_k = 0;            // experts each token goes to
  std::int64_t expert_d_ff = 0;      // one expert's FFN width
  std::int64_t shared_experts = 0;   // experts every token goes through, each expert_d_ff wide
  std::int64_t dense_layers = 0;     // leading layers with a dense MLP instead
  std::int64_t dense_d_ff = 0;       // their FFN width
};

struct ModelShape {
  std::int64_t layers = 0;
  std::int64_t d_model = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;    // = heads: multi-head attention
  std::int64_t head_dim = 0;    // usually d_model / heads
  std::int64_t d_ff = 0;        // the dense MLP's width (MoE models: expert widths in `moe`)
  std::int64_t vocabulary = 0;
  bool gated_mlp = true;        // SwiGLU: three matrices; false: two (GPT's GeLU MLP)
  std::optional<LatentAttention> latent_attention;
  std::optional<MixtureOfExperts> moe;
  // Sliding-window attention on a share of the layers (GPT-OSS alternates: 0.5 of 128 tokens).
  std::int64_t sliding_window = 0;
  double sliding_window_layer_share = 0;

  std::int64_t query_width() const { return heads * head_dim; }
  std::int64_t moe_layers() const { return moe ? layers - moe->dense_layers : 0; }
  std::int64_t dense_mlp_layers() const { return layers - moe_layers(); }
};

// The width of the MLP's intermediate a token passes through in one layer: d_ff in a dense
// model, the leading dense layers' width in a MoE model, and in a MoE layer its top_k routed
// experts' and its shared experts' widths together.
double mlp_intermediate_width(const ModelShape& model, bool moe_layer);

// FLOPs of one token's forward pass through one layer, by part (a multiply-add is 2 FLOPs).
// The attention core is what the kernel computes for a token at `sequence` with causal masking:
// flash attention skips the masked half, so a token attends to sequence / 2 keys on average
// (fewer in a sliding window).
struct TokenLayerFlops {
  double attention_projections = 0;  // QKV (or MLA's projections) and the output projection
  double attention_core = 0;         // Q·Kᵀ and P·V
  double dense_mlp = 0;              // a dense layer's MLP
  double router = 0;                 // a MoE layer's gate
  double routed_experts = 0;         // a MoE layer's top-k experts
  double shared_experts = 0;
};
TokenLayerFlops token_layer_flops(const ModelShape& model, std::int64_t sequence);
// The output layer (logits) per token.
double token_logit_flops(const ModelShape& model);

// Parameters: one layer's attention, a dense MLP, one routed expert, the embedding table (the
// output layer is as large: untied).
std::int64_t attention_parameters(const ModelShape& model);
std::int64_t dense_mlp_parameters(const ModelShape& model, std::int64_t d_ff);
std::int64_t expert_parameters(const ModelShape& model);
std::int64_t embedding_parameters(const ModelShape& model);
// Every parameter of the model, and those one token uses (MoE: top_k of the routed experts).
double total_parameters(const ModelShape& model);
double active_parameters(const ModelShape& model);

// The step's model FLOPs per token as Megatron counts them (forward and backward, causal
// attention halved, no recompute): MFU's numerator (docs/training-model.md, "MFU").
double model_flops_per_token(const ModelShape& model, std::int64_t sequence);

// spmd::Error naming the field when the shape is inconsistent (heads not a multiple of
// kv_heads, top_k above experts, ...). `where` starts the message ("published.csv:7").
void check_model_shape(const ModelShape& model, std::string_view where);

}  // namespace spmd::training
