#include "training/model_shape.h"

#include <fmt/format.h>

#include <algorithm>

#include "reference/error.h"

namespace spmd::training {
namespace {

double mlp_flops_per_token(const ModelShape& model, std::int64_t d_ff) {
  return 2.0 * model.d_model * d_ff * (model.gated_mlp ? 3 : 2);
}

// Keys a token attends to on average in a causal layer of `sequence` tokens, over the layers
// (a sliding window caps some of them).
double attended_keys(const ModelShape& model, std::int64_t sequence) {
  const double full = sequence / 2.0;
  if (model.sliding_window <= 0) return full;
  const double windowed = std::min<double>(model.sliding_window, full);
  return (1 - model.sliding_window_layer_share) * full +
         model.sliding_window_layer_share * windowed;
}

}  // namespace

double mlp_intermediate_width(const ModelShape& model, bool moe_layer) {
  if (moe_layer && model.moe) {
    return static_cast<double>(model.moe->expert_d_ff) *
           static_cast<double>(model.moe->top_k + model.moe->shared_experts);
  }
  if (model.moe && model.moe->dense_d_ff > 0) return static_cast<double>(model.moe->dense_d_ff);
  return static_cast<double>(model.d_ff);
}

TokenLayerFlops token_layer_flops(const ModelShape& model, std::int64_t sequence) {
  TokenLayerFlops flops;
  const double h = static_cast<double>(model.d_model);
  const double keys = attended_keys(model, sequence);
  if (model.latent_attention) {
    const LatentAttention& mla = *model.latent_attention;
    const double qk_dim = static_cast<double>(mla.qk_nope_head_dim + mla.qk_rope_head_dim);
    const double q = mla.q_lora_rank > 0
                         ? h * mla.q_lora_rank + mla.q_lora_rank * model.heads * qk_dim
                         : h * model.heads * qk_dim;
    const double kv = h * (mla.kv_lora_rank + mla.qk_rope_head_dim) +
                      static_cast<double>(mla.kv_lora_rank) * model.heads *
                          (mla.qk_nope_head_dim + mla.v_head_dim);
    const double out = static_cast<double>(model.heads) * mla.v_head_dim * h;
    flops.attention_projections = 2 * (q + kv + out);
    flops.attention_core = 2.0 * model.heads * (qk_dim + mla.v_head_dim) * keys;
  } else {
    const double q = static_cast<double>(model.query_width());
    const double kv = 2.0 * model.kv_heads * model.head_dim;
    flops.attention_projections = 2 * (h * (q + kv) + q * h);
    flops.attention_core = 2.0 * 2.0 * q * keys;
  }
  if (model.moe) {
    const MixtureOfExperts& moe = *model.moe;
    flops.dense_mlp = mlp_flops_per_token(model, moe.dense_d_ff > 0 ? moe.dense_d_ff : model.d_ff);
    flops.router = 2 * h * moe.experts;
    flops.routed_experts = moe.top_k * mlp_flops_per_token(model, moe.expert_d_ff);
    flops.shared_experts = moe.shared_experts * mlp_flops_per_token(model, moe.expert_d_ff);
  } else {
    flops.dense_mlp = mlp_flops_per_token(model, model.d_ff);
  }
  return flops;
}

double token_logit_flops(const ModelShape& model) {
  return 2.0 * model.d_model * model.vocabulary;
}

std::int64_t attention_parameters(const ModelShape& model) {
  const std::int64_t h = model.d_model;
  if (model.latent_attention) {
    const LatentAttention& mla = *model.latent_attention;
    const std::int64_t qk_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
    const std::int64_t q = mla.q_lora_rank > 0
                               ? h * mla.q_lora_rank + mla.q_lora_rank * model.heads * qk_dim
                               : h * model.heads * qk_dim;
    const std::int64_t kv = h * (mla.kv_lora_rank + mla.qk_rope_head_dim) +
                            mla.kv_lora_rank * model.heads * (mla.qk_nope_head_dim + mla.v_head_dim);
    return q + kv + model.heads * mla.v_head_dim * h;
  }
  const std::int64_t q = model.query_width();
  return h * (q + 2 * model.kv_heads * model.head_dim) + q * h;
}

std::int64_t dense_mlp_parameters(const ModelShape& model, std::int64_t d_ff) {
  return model.d_model * d_ff * (model.gated_mlp ? 3 : 2);
}

std::int64_t expert_parameters(const ModelShape& model) {
  return model.moe ? dense_mlp_parameters(model, model.moe->expert_d_ff) : 0;
}

std::int64_t embedding_parameters(const ModelShape& model) {
  return model.d_model * model.vocabulary;
}

double total_parameters(const ModelShape& model) {
  double per_layer_attention = static_cast<double>(attention_parameters(model));
  double total = model.layers * per_layer_attention + 2.0 * embedding_parameters(model);
  if (model.moe) {
    const MixtureOfExperts& moe = *model.moe;
    const std::int64_t dense_ff = moe.dense_d_ff > 0 ? moe.dense_d_ff : model.d_ff;
    total += moe.dense_layers * static_cast<double>(dense_mlp_parameters(model, dense_ff));
    total += model.moe_layers() * static_cast<double>(moe.experts + moe.shared_experts) *
             expert_parameters(model);
  } else {
    total += model.layers * static_cast<double>(dense_mlp_parameters(model, model.d_ff));
  }
  return total;
}

double active_parameters(const ModelShape& model) {
  if (!model.moe) return total_parameters(model);
  const MixtureOfExperts& moe = *model.moe;
  return total_parameters(model) -
         model.moe_layers() * static_cast<double>(moe.experts - moe.top_k) * expert_parameters(model);
}

double model_flops_per_token(const ModelShape& model, std::int64_t sequence) {
  const TokenLayerFlops f = token_layer_flops(model, sequence);
  const double dense_layer = f.attention_projections + f.attention_core + f.dense_mlp;
  const double moe_layer =
      f.attention_projections + f.attention_core + f.routed_experts + f.shared_experts;
  const double forward = model.dense_mlp_layers() * dense_layer + model.moe_layers() * moe_layer +
                         token_logit_flops(model);
  return 3 * forward;
}

void check_model_shape(const ModelShape& model, std::string_view where) {
  auto require = [&](bool ok, std::string_view field, std::int64_t value,
                     std::string_view expected) {
    if (!ok) throw Error(fmt::format("{}: {} {}: expected {}", where, field, value, expected));
  };
  // Bounds far above any model trained, so that every product below stays finite and every
  // time within the collective model's clock.
  require(model.layers > 0 && model.layers <= 100'000, "layers", model.layers,
          "a positive integer of at most 100000");
  require(model.d_model > 0 && model.d_model <= 1'000'000, "d_model", model.d_model,
          "a positive integer of at most 1000000");
  require(model.heads > 0 && model.heads <= 100'000, "heads", model.heads,
          "a positive integer of at most 100000");
  require(model.d_ff <= 10'000'000, "d_ff", model.d_ff, "at most 10000000");
  require(model.vocabulary <= 100'000'000, "vocabulary", model.vocabulary, "at most 100000000");
  require(model.kv_heads > 0 && model.heads % model.kv_heads == 0, "kv_heads", model.kv_heads,
          fmt::format("a positive divisor of heads ({})", model.heads));
  require(model.head_dim > 0, "head_dim", model.head_dim, "a positive integer");
  require(model.vocabulary > 0, "vocabulary", model.vocabulary, "a positive integer");
  if (model.moe) {
    const MixtureOfExperts& moe = *model.moe;
    require(moe.experts > 0 && moe.experts <= 100'000, "moe_experts", moe.experts,
            "a positive integer of at most 100000");
    require(moe.top_k > 0 && moe.top_k <= moe.experts, "moe_topk", moe.top_k,
            fmt::format("from 1 to moe_experts ({})", moe.experts));
    require(moe.expert_d_ff > 0, "d_ff", moe.expert_d_ff, "a positive expert width");
    require(moe.dense_layers >= 0 && moe.dense_layers < model.layers, "dense_layers",
            moe.dense_layers, fmt::format("from 0 to layers - 1 ({})", model.layers - 1));
  } else {
    require(model.d_ff > 0, "d_ff", model.d_ff, "a positive integer");
  }
}

}  // namespace spmd::training
