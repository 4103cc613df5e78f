#include "training/training_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace spmd::training {
namespace {

// The CUDA context and kernels' modules (about 0.5-1 GB), NCCL's channel buffers for each
// communicator (4 MiB per channel and peer for the Simple protocol), cuBLAS workspaces: about
// 3 GB in all on a device in several groups. SimuMax keeps a 6 GiB margin for the same.
constexpr double kRuntimeBytes = 3e9;
// PyTorch's caching allocator keeps freed blocks for reuse: what it reserves exceeds what is
// allocated by about 6% (SimuMax's allocated / 0.94).
constexpr double kAllocatorSlackShare = 0.06;

// One layer's activations for one micro-batch on one device, kept for the backward pass, in
// bytes (flash attention: no s² scores; Korthikanti et al. 2022's count otherwise):
// the inputs of both norms, of the QKV, output and MLP projections, Q, K and V, the MLP's
// intermediate and activation output, MoE's permuted token copies.
double layer_activation_bytes(const TrainingJob& job, bool moe_layer, bool mlp_recomputed) {
  const ModelShape& m = job.model;
  const ParallelLayout& l = job.layout;
  const double tokens =
      static_cast<double>(job.batch.micro_batch_sequences) * job.batch.sequence / l.context;
  const double h = static_cast<double>(m.d_model);
  const double mlp_width = mlp_intermediate_width(m, moe_layer);
  const double qkv = static_cast<double>(m.query_width() + 2 * m.kv_heads * m.head_dim);
  // bf16: norm inputs (2h), QKV output, the MLP's intermediate (2 d_ff gated); the four GEMMs'
  // inputs (QKV input, attention output, MLP input, activation output) in the matmul's operand
  // format, the quantized copy the GEMM read (Transformer Engine and torchao keep it for the
  // weight gradient). Recomputing the MLP keeps only its input.
  const double operand = std::min(2.0, operand_bytes(job.precision));
  const double intermediate = mlp_recomputed ? 0 : (m.gated_mlp ? 2 : 1) * mlp_width;
  const double activation_output = mlp_recomputed ? 0 : mlp_width;
  double per_token = 2 * (2 * h + qkv + intermediate) +
                     operand * (2 * h + m.query_width() + activation_output);
  if (moe_layer) per_token += 2 * 2 * static_cast<double>(m.moe->top_k) * h;  // permuted copies
  if (!job.software.flash_attention) {
    per_token += 5.0 * m.heads * job.batch.sequence / l.context;  // scores, softmax, dropout
  }
  return tokens * per_token / l.tensor;
}

double mlp_recomputed_activation_bytes(const TrainingJob& job, bool moe_layer) {
  return layer_activation_bytes(job, moe_layer, true);
}

// What torchtitan's per-op selective recompute keeps of a layer (SelectiveRecompute): the
// block's input and attention's output; in bf16 also the odd-numbered mms' outputs (Q and V
// projections, the MLP's first GEMM, and a gated MLP's last); 8-bit matmuls and grouped expert
// GEMMs keep nothing.
double per_op_saved_activation_bytes(const TrainingJob& job, bool moe_layer) {
  const ModelShape& m = job.model;
  const ParallelLayout& l = job.layout;
  const double tokens =
      static_cast<double>(job.batch.micro_batch_sequences) * job.batch.sequence / l.context;
  const double h = static_cast<double>(m.d_model);
  const double attention_out = static_cast<double>(m.query_width());
  double per_token = 2 * (h + attention_out);
  if (job.precision == MatmulPrecision::bf16) {
    per_token += 2 * static_cast<double>(m.query_width() + m.kv_heads * m.head_dim);
    if (!moe_layer) {
      per_token += 2 * (mlp_intermediate_width(m, false) + (m.gated_mlp ? h : 0));
    }
  }
  return tokens * per_token / l.tensor;
}

}  // namespace

double layer_activation_bytes(const TrainingJob& job, bool moe_layer) {
  return layer_activation_bytes(job, moe_layer, false);
}

std::string TrainingMemory::parts_text() const {
  std::string text = fmt::format(
      "weights {:.1f} GB, gradients {:.1f} GB, optimizer states {:.1f} GB, activations {:.1f} GB",
      weights_bytes / 1e9, gradients_bytes / 1e9, optimizer_bytes / 1e9, activations_bytes / 1e9);
  if (gathered_weights_bytes > 0) {
    text += fmt::format(", FSDP gathered weights {:.1f} GB", gathered_weights_bytes / 1e9);
  }
  if (logits_bytes > 0) text += fmt::format(", logits {:.1f} GB", logits_bytes / 1e9);
  text += fmt::format(", runtime {:.1f} GB, allocator {:.1f} GB", runtime_bytes / 1e9,
                      allocator_slack_bytes / 1e9);
  return text;
}

TrainingMemory peak_memory(const TrainingJob& job) {
  const ModelShape& m = job.model;
  const ParallelLayout& l = job.layout;
  const double layers_per_rank = std::ceil(static_cast<double>(m.layers) / l.pipeline);
  const double moe_share = static_cast<double>(m.moe_layers()) / static_cast<double>(m.layers);
  const StageParameters stage = stage_parameters(job);
  const double dense_params = stage.dense;
  const double expert_params = stage.expert;
  const double params = stage.total();

  TrainingMemory memory;
  const double grad_bytes = job.software.gradient_reduce_bytes;
  if (l.fsdp > 1) {
    // FSDP shards everything over its group (fsdp x cp: the frameworks shard over the context
    // ranks too) and keeps fp32 parameters, gradients and Adam's m and v: 16 bytes a parameter
    // (PyTorch FSDP with bf16 compute, MaxText's float32 weights); the gathered layer and the
    // one prefetched are whole, in bf16.
    const int shards = l.fsdp * l.context;
    const double shard =
        dense_params / shards + expert_params / std::max(1, shards / l.expert);
    memory.weights_bytes = 4 * shard;
    memory.gradients_bytes = 4 * shard;
    memory.optimizer_bytes = 8 * shard;
    // The layer computing and the one prefetched; without resharding after the forward, every
    // layer of the stage stays gathered until its backward.
    memory.gathered_weights_bytes =
        l.reshard_after_forward ? 2 * 2 * (stage.dense_per_layer / l.tensor)
                                : 2 * (stage.dense + stage.expert) - 2 * shard;
  } else {
    memory.weights_bytes = 2 * params;
    memory.gradients_bytes = grad_bytes * params;
    const double dense_shards = l.distributed_optimizer ? l.data * l.context : 1;
    const double expert_shards =
        std::max(1.0, dense_shards * l.tensor / static_cast<double>(l.expert));
    memory.optimizer_bytes = 12 * (dense_params / dense_shards + expert_params / expert_shards);
  }
  if (job.precision != MatmulPrecision::bf16) {
    memory.weights_bytes += operand_bytes(job.precision) * (l.fsdp > 1 ? 0 : params);
  }

  // Activations: the first stage of a 1F1B pipeline holds min(m, p) micro-batches of its
  // layers, interleaving adds (p - 1) / (p v) of that (Megatron's count).
  const double in_flight = std::min<double>(static_cast<double>(job.micro_batches()), l.pipeline);
  const double interleave =
      l.virtual_stages > 1 ? 1 + (l.pipeline - 1.0) / (l.pipeline * l.virtual_stages) : 1;
  const double per_layer = (1 - moe_share) * layer_activation_bytes(job, false) +
                           moe_share * layer_activation_bytes(job, true);
  const double tokens =
      static_cast<double>(job.batch.micro_batch_sequences) * job.batch.sequence / l.context;
  double kept_per_layer = per_layer;
  if (job.recompute == Recompute::mlp) {
    kept_per_layer = (1 - moe_share) * mlp_recomputed_activation_bytes(job, false) +
                     moe_share * mlp_recomputed_activation_bytes(job, true);
  } else if (job.recompute == Recompute::full) {
    kept_per_layer = 2 * tokens * static_cast<double>(m.d_model) / l.tensor;
  } else if (job.recompute == Recompute::offload) {
    kept_per_layer = 0;  // in host memory; the two layers on the device are added below
  } else if (job.recompute == Recompute::selective &&
             job.software.selective_recompute == SelectiveRecompute::every_second_matmul) {
    kept_per_layer = (1 - moe_share) * per_op_saved_activation_bytes(job, false) +
                     moe_share * per_op_saved_activation_bytes(job, true);
  }
  // A recomputed layer's full activations exist while its backward runs.
  memory.activations_bytes =
      kept_per_layer * layers_per_rank * in_flight * interleave + (per_layer - kept_per_layer);
  // Offloading holds the layer computing and the one whose copy is under way.
  if (job.recompute == Recompute::offload) memory.activations_bytes = 2 * per_layer;
  // The last stage's logits in fp32 and their gradient (on the only stage when pp = 1).
  if (l.pipeline == 1) {
    const double bytes_per_logit = job.software.fused_cross_entropy ? 2 : 2 * 4;
    memory.logits_bytes = bytes_per_logit * tokens * static_cast<double>(m.vocabulary) / l.tensor;
  }
  memory.runtime_bytes = kRuntimeBytes;
  const double allocated = memory.total_bytes();
  memory.allocator_slack_bytes = kAllocatorSlackShare * allocated;
  return memory;
}

}  // namespace spmd::training
