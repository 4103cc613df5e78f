#include "training/step_time.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cost_model/collective_timing.h"
#include "reference/error.h"
#include "sim/machine_presets.h"
#include "training/activation_offload.h"
#include "training/training_memory.h"
#include "training/gemm_time.h"
#include "training/ici_collectives.h"

namespace spmd::training {
namespace {

using cost_model::TimedOp;

constexpr double kPicosecondsPerSecond = 1e12;
// Flash attention's backward runs five matmuls where its forward runs two (it recomputes the
// scores): 2.5 times the forward's FLOPs.
constexpr double kAttentionBackwardRatio = 2.5;
// PyTorch's context_parallel merges each attention step's output into fp32 running buffers: the
// bf16 output cast to fp32 (read 2, write 4 bytes), then the running output read, the cast
// copy read and the running output written (4 + 4 + 4), its log-sum-exp beside it negligible.
constexpr double kForwardMergeBytesPerElement = 18;
// Its backward adds each step's gradient, cast from bf16 (2), into an fp32 accumulator (read
// 4, write 4).
constexpr double kGradientAccumulateBytesPerElement = 10;
// Bytes of activation traffic per token per layer in the forward pass of fused element-wise
// kernels, counted in d_model-wide bf16 tensors read or written: two norms (read, write), two
// residual adds (read two, write one), RoPE on Q and K. Eager PyTorch runs each op of a norm,
// an activation or RoPE as its own kernel: about three times the traffic.
constexpr double kFusedElementwiseTensorsPerLayer = 10;
constexpr double kEagerElementwiseTraffic = 3;
// Without flash attention the s² scores are written by the Q·Kᵀ GEMM, read and written by the
// softmax, and a dropout mask written: 7 bytes per score per token in the forward pass.
constexpr double kStoredScoreBytes = 7;
// Adam's update streams, per parameter it owns: the fp32 master weight, m and v read and
// written (24 bytes), the gradient read (4) and the bf16 weight written (2).
constexpr double kAdamBytesPerParameter = 30;
// The backward pass computes input and weight gradients: twice the forward's GEMM FLOPs, and
// about twice its element-wise traffic.
constexpr double kBackwardToForward = 2;

double seconds(std::int64_t picoseconds) { return picoseconds / kPicosecondsPerSecond; }

// How many of a group's ranks share a node when its ranks lie `stride` devices apart (the
// mesh is tensor-innermost, then context, data and pipeline, as Megatron orders its groups).
int ranks_per_node(int ranks, int stride, int devices_per_node) {
  if (stride >= devices_per_node) return 1;
  return std::max(1, std::min(ranks, devices_per_node / stride));
}

class StepModel {
 public:
  StepModel(const TrainingJob& job, const cost_model::Fabric& fabric)
      : job_(job), fabric_(fabric), a_(job.accelerator), l_(job.layout), m_(job.model) {
    tokens_ = static_cast<double>(job.batch.micro_batch_sequences) * job.batch.sequence /
              l_.context;
  }

  StepTime predict() const {
    StepTime step;
    const Layer dense = layer(false);
    const Layer moe = layer(true);
    const double dense_share =
        static_cast<double>(m_.dense_mlp_layers()) / static_cast<double>(m_.layers);
    auto per_layer = [&](double Layer::*part) {
      return dense_share * dense.*part + (1 - dense_share) * moe.*part;
    };
    // The last stage also runs the logits and the loss; where the layers do not divide, the
    // other stages take the extra ones (as Megatron's and torchtitan's uneven splits do), so
    // the fullest rank is the longer of the two.
    const double layers_per_rank = static_cast<double>(m_.layers) / l_.pipeline;
    const double fullest_rank_layers = std::ceil(layers_per_rank);
    const double compute_layer = per_layer(&Layer::compute_s);
    const double stage_compute = std::max(fullest_rank_layers * compute_layer,
                                          layers_per_rank * compute_layer + logits_seconds());
    const double micro_batches = static_cast<double>(job_.micro_batches());
    step.compute_s = micro_batches * stage_compute;
    step.tensor_parallel_s =
        micro_batches * fullest_rank_layers * per_layer(&Layer::tensor_parallel_s);
    step.context_parallel_s =
        micro_batches * fullest_rank_layers * per_layer(&Layer::context_parallel_s);
    step.expert_parallel_s =
        micro_batches * fullest_rank_layers * per_layer(&Layer::expert_parallel_s);
    step.activation_offload_s =
        micro_batches * fullest_rank_layers * per_layer(&Layer::activation_offload_s);
    const double micro_batch_s =
        (step.compute_s + step.tensor_parallel_s + step.context_parallel_s +
         step.expert_parallel_s + step.activation_offload_s) /
        micro_batches;
    step.pipeline_bubble_s =
        micro_batch_s * static_cast<double>(l_.pipeline - 1) / l_.virtual_stages;
    step.pipeline_transfer_s = micro_batches * pipeline_transfer_seconds();
    step.data_parallel_s = data_parallel_seconds(micro_batch_s, micro_batches);
    step.optimizer_s = optimizer_seconds();
    return step;
  }

 private:
  // One layer, one micro-batch, forward and backward (and recompute) on one device.
  struct Layer {
    double compute_s = 0;
    double tensor_parallel_s = 0;
    double context_parallel_s = 0;
    double expert_parallel_s = 0;
    double activation_offload_s = 0;
  };

  double collective_seconds(TimedOp op, double bytes, int ranks, int stride) const {
    if (ranks <= 1 || bytes <= 0) return 0;
    if (a_.tpu) return ici_collective_seconds(a_, op, bytes, ranks, stride);
    cost_model::TimingRequest request;
    request.op = op;
    request.bytes = static_cast<std::int64_t>(std::llround(bytes));
    request.ranks = ranks;
    request.ranks_per_node = ranks_per_node(ranks, stride, fabric_.devices_per_node);
    request.element_bytes = 2;
    return seconds(cost_model::time_collective(fabric_, request).time_ps);
  }

  double gemm(double rows, double columns, double depth, double count = 1) const {
    return gemm_seconds(a_, job_.precision, GemmShape{rows, columns, depth}, count);
  }

  double streaming_seconds(double bytes) const {
    return bytes / (a_.memory_bandwidth_bytes_per_s * memory_efficiency());
  }

  // Forward GEMM seconds of the layer's matmuls on this device (split over tensor): attention's
  // and the MLP's (or the experts').
  struct ForwardGemms {
    double attention_s = 0;
    double mlp_s = 0;
    double total_s() const { return attention_s + mlp_s; }
  };
  // The width of attention's output, the output projection's depth.
  double attention_output_width() const {
    return m_.latent_attention ? static_cast<double>(m_.heads * m_.latent_attention->v_head_dim)
                               : static_cast<double>(m_.query_width());
  }

  ForwardGemms forward_gemm_seconds(bool moe_layer, const TokenLayerFlops& flops) const {
    const double h = static_cast<double>(m_.d_model);
    const double t = l_.tensor;
    // Attention projections: the QKV GEMM's width from its FLOPs, then the output projection.
    const double out_projection_columns = h;
    const double out_projection_depth = attention_output_width();
    const double out_projection_flops = 2 * out_projection_columns * out_projection_depth;
    const double input_projection_columns =
        (flops.attention_projections - out_projection_flops) / (2 * h);
    ForwardGemms gemms;
    gemms.attention_s = input_projection_seconds(input_projection_columns) +
                        gemm(tokens_, out_projection_columns, out_projection_depth / t);
    const double gate_columns = m_.gated_mlp ? 2 : 1;
    if (!moe_layer) {
      const double d_ff = flops.dense_mlp / (2 * h * (m_.gated_mlp ? 3 : 2));
      gemms.mlp_s = mlp_input_seconds(tokens_, d_ff / t) + gemm(tokens_, h, d_ff / t);
      return gemms;
    }
    double& s = gemms.mlp_s;
    const MixtureOfExperts& moe = *m_.moe;
    const double d_e = static_cast<double>(moe.expert_d_ff);
    s += gemm(tokens_, static_cast<double>(moe.experts), h);  // the router
    // Balanced routing: the expert group's token copies spread evenly over its experts.
    const double local_experts = static_cast<double>(moe.experts) / l_.expert;
    const double rows_per_expert = job_.moe_imbalance * tokens_ * moe.top_k * l_.expert /
                                   (t * static_cast<double>(moe.experts));
    s += gemm(rows_per_expert, gate_columns * d_e, h, local_experts) +
         gemm(rows_per_expert, h, d_e, local_experts);
    if (moe.shared_experts > 0) {
      const double shared = static_cast<double>(moe.shared_experts) * d_e;
      s += mlp_input_seconds(tokens_, shared / t) + gemm(tokens_, h, shared / t);
    }
    return gemms;
  }

  // Q, K and V from the layer's input (`columns` wide in all): one GEMM, or three where the
  // software keeps them apart (latent attention's projections stay one here).
  double input_projection_seconds(double columns) const {
    const double h = static_cast<double>(m_.d_model);
    const double t = l_.tensor;
    if (!job_.software.separate_input_projections || m_.latent_attention) {
      return gemm(tokens_, columns / t, h);
    }
    const double kv_columns = static_cast<double>(m_.kv_heads * m_.head_dim);
    return gemm(tokens_, static_cast<double>(m_.query_width()) / t, h) +
           gemm(tokens_, kv_columns / t, h, 2);
  }

  // The MLP's input GEMMs, `width` wide each on this device: a gated MLP's gate and up
  // projections as one GEMM or two.
  double mlp_input_seconds(double rows, double width) const {
    const double h = static_cast<double>(m_.d_model);
    if (!m_.gated_mlp) return gemm(rows, width, h);
    if (job_.software.separate_input_projections) return gemm(rows, width, h, 2);
    return gemm(rows, 2 * width, h);
  }

  // Bytes the layer's element-wise kernels move per token in the forward pass, per device.
  double forward_elementwise_bytes_per_token(bool moe_layer) const {
    const double h = static_cast<double>(m_.d_model);
    const double mlp_width = mlp_intermediate_width(m_, moe_layer);
    // The activation reads two (gated) or one d_ff-wide tensors and writes one.
    const double activation_tensors = m_.gated_mlp ? 3 : 2;
    double bytes = 2 * (kFusedElementwiseTensorsPerLayer * h + activation_tensors * mlp_width);
    if (moe_layer) {
      // Permute before dispatch and unpermute after combine: each token copy read and written.
      bytes += 2 * 2 * 2 * static_cast<double>(m_.moe->top_k) * h;
    }
    if (!job_.software.fused_elementwise) bytes *= kEagerElementwiseTraffic;
    if (!job_.software.flash_attention) {
      bytes += kStoredScoreBytes * static_cast<double>(m_.heads) * job_.batch.sequence;
    }
    if (job_.precision != MatmulPrecision::bf16) {
      // Each GEMM input cast from bf16: read 2 bytes, write the narrow copy; Hopper's FP8
      // GEMMs take a transposed copy too for the weight gradient.
      const bool transposed_copy = a_.generation != cost_model::GpuGeneration::blackwell;
      const double cast_bytes = 2 + operand_bytes(job_.precision) * (transposed_copy ? 2 : 1);
      bytes += cast_bytes * (2 * h + static_cast<double>(m_.query_width()) + mlp_width);
    }
    return bytes / l_.tensor;
  }

  Layer layer(bool moe_layer) const {
    Layer layer;
    if (moe_layer && !m_.moe) return layer;
    const TokenLayerFlops flops = token_layer_flops(m_, job_.batch.sequence);
    const ForwardGemms gemms = forward_gemm_seconds(moe_layer, flops);
    const double gemm_forward = gemms.total_s();
    const AttentionEfficiency attention =
        attention_kernel_efficiency(a_, job_.software.attention_kernel);
    const double attention_flops = tokens_ * flops.attention_core / l_.tensor;
    const double bf16_peak = a_.peak_flops_per_s(MatmulPrecision::bf16);
    const double attention_forward = attention_flops / (bf16_peak * attention.forward);
    const double attention_backward =
        kAttentionBackwardRatio * attention_flops / (bf16_peak * attention.backward);
    const double elementwise_forward =
        streaming_seconds(tokens_ * forward_elementwise_bytes_per_token(moe_layer));
    const double forward = gemm_forward + attention_forward + elementwise_forward;
    const double backward = kBackwardToForward * (gemm_forward + elementwise_forward) +
                            attention_backward;
    double recompute = 0;
    if (job_.recompute == Recompute::full) {
      recompute = forward;
    } else if (job_.recompute == Recompute::selective &&
               job_.software.selective_recompute == SelectiveRecompute::every_second_matmul) {
      recompute = every_second_matmul_recompute_seconds(moe_layer, flops, gemms) +
                  elementwise_forward;
    } else if (job_.recompute == Recompute::mlp) {
      // The first MLP GEMM (two thirds of a gated MLP's, half of a plain one's) and the
      // activation, whose traffic is most of the element-wise kernels'.
      recompute = gemms.mlp_s * (m_.gated_mlp ? 2.0 / 3 : 0.5) + 0.5 * elementwise_forward;
    }
    layer.compute_s = forward + backward + recompute;
    if (job_.recompute == Recompute::offload) {
      layer.activation_offload_s = exposed_offload_seconds(
          layer_activation_bytes(job_, moe_layer), forward, backward,
          host_link_bytes_per_s(fabric_.generation, fabric_.host));
    }

    layer.tensor_parallel_s = tensor_parallel_seconds(gemm_forward);
    layer.context_parallel_s = context_parallel_seconds(attention_forward, attention_backward);
    if (moe_layer && l_.expert > 1) {
      // Dispatch (in the matmul format where it is 8-bit) and combine (bf16), forward and
      // backward, of the rank's token copies.
      const double dispatch_element = std::min(2.0, operand_bytes(job_.precision));
      layer.expert_parallel_s =
          2 * (expert_exchange_seconds(dispatch_element) + expert_exchange_seconds(2));
    }
    return layer;
  }

  // The forward GEMMs torchtitan's per-op selective recompute runs again: the even-numbered
  // mms of the block (a K or V projection, the output projection, one d_ff-wide MLP GEMM) in
  // bf16; every GEMM where the matmuls are 8-bit (torch._scaled_mm is not in its save list) and
  // the grouped expert GEMMs of an MoE layer.
  double every_second_matmul_recompute_seconds(bool moe_layer, const TokenLayerFlops& flops,
                                               const ForwardGemms& gemms) const {
    if (job_.precision != MatmulPrecision::bf16) return gemms.total_s();
    const double h = static_cast<double>(m_.d_model);
    const double t = l_.tensor;
    const double kv_columns = static_cast<double>(m_.kv_heads * m_.head_dim);
    const double attention =
        gemm(tokens_, kv_columns / t, h) + gemm(tokens_, h, attention_output_width() / t);
    if (moe_layer) return attention + gemms.mlp_s;
    const double d_ff = flops.dense_mlp / (2 * h * (m_.gated_mlp ? 3 : 2));
    return attention + gemm(tokens_, d_ff / t, h);
  }

  // Sequence parallel: an all-gather before and a reduce-scatter after attention and the MLP,
  // forward, and the same again backward (and in a recomputed forward); hidden under the
  // layer's GEMMs where the software overlaps them. The all-gathers feed GEMMs and move their
  // operands quantized (Transformer Engine and torchao cast before gathering): one byte an
  // element in per-tensor FP8; the block-scaled formats gather the row-wise and the column-wise
  // copy the weight gradient needs, so no less than bf16. The reduce-scatters sum GEMM outputs
  // in bf16.
  double tensor_parallel_seconds(double gemm_forward_s) const {
    if (l_.tensor <= 1) return 0;
    const double elements = tokens_ * static_cast<double>(m_.d_model);
    const double gathered_element_bytes =
        job_.precision == MatmulPrecision::fp8 ? 1 : std::min(2.0, 2 * operand_bytes(job_.precision));
    const double all_gather_s =
        collective_seconds(TimedOp::all_gather, elements * gathered_element_bytes, l_.tensor, 1);
    const double reduce_scatter_s =
        collective_seconds(TimedOp::reduce_scatter, elements * 2, l_.tensor, 1);
    // A recomputed forward gathers again; torchtitan's per-op policy keeps the reduce-scatters'
    // outputs, not the all-gathers'.
    const bool full = job_.recompute == Recompute::full;
    const bool per_op = job_.recompute == Recompute::selective &&
                        job_.software.selective_recompute == SelectiveRecompute::every_second_matmul;
    const double all_gather_passes = 2 + (full || per_op ? 1 : 0);
    const double reduce_scatter_passes = 2 + (full ? 1 : 0);
    const double comm =
        2 * (all_gather_passes * all_gather_s + reduce_scatter_passes * reduce_scatter_s);
    switch (job_.software.tensor_parallel_overlap) {
      case TensorParallelOverlap::none: return comm;
      case TensorParallelOverlap::every_collective: return overlapped_seconds(comm, gemm_forward_s);
      case TensorParallelOverlap::matmul_adjacent: {
        // The backward's two input-gradient reduce-scatters stay exposed; each fused
        // reduce-scatter (attention's and the MLP's, in every forward that runs them) ends
        // with a sum over the tp partials: the whole output read, this rank's share written.
        const double exposed = 2 * reduce_scatter_s;
        const double forward_reduce_scatters = 2 * (reduce_scatter_passes - 1);
        const double partial_sums = forward_reduce_scatters *
                                    streaming_seconds(elements * 2 * (1 + 1.0 / l_.tensor));
        return exposed + partial_sums + overlapped_seconds(comm - exposed, gemm_forward_s);
      }
    }
    return comm;
  }

  // Collectives pipelined with their GEMMs in tp chunks: the first chunk's transfer has
  // nothing to hide under, the rest hide under the layer's GEMMs, forward and backward.
  double overlapped_seconds(double comm_s, double gemm_forward_s) const {
    const double first_chunk = comm_s / l_.tensor;
    return first_chunk +
           std::max(0.0, comm_s - first_chunk - (1 + kBackwardToForward) * gemm_forward_s);
  }

  // Context parallelism's exchange of attention's inputs, beside the attention kernels'
  // forward and backward seconds.
  double context_parallel_seconds(double attention_forward_s, double attention_backward_s) const {
    if (l_.context <= 1) return 0;
    switch (l_.context_exchange) {
      case ParallelLayout::ContextExchange::all_to_all: return ulysses_seconds();
      case ParallelLayout::ContextExchange::all_gather:
        return gathered_context_seconds(attention_forward_s, attention_backward_s);
      case ParallelLayout::ContextExchange::ring: break;
    }
    // Ring attention: each of cp - 1 steps passes this rank's K and V chunk on, forward; the
    // backward passes K, V and their gradients. Hidden under the attention kernels.
    const double chunk_bytes = tokens_ * context_kv_width() * 2 / l_.tensor;
    const double step_s = collective_seconds(TimedOp::permute, chunk_bytes, l_.context, l_.tensor);
    const double comm = (l_.context - 1) * step_s * (1 + 2);
    return std::max(0.0, comm - (attention_forward_s + attention_backward_s));
  }

  // Ulysses: Q, K and V re-sharded from sequence to heads before attention and the output back
  // after it, forward; their gradients the same way backward. Exposed.
  double ulysses_seconds() const {
    const double qkv_width =
        static_cast<double>(m_.query_width() + 2 * m_.kv_heads * m_.head_dim);
    const double inputs = tokens_ * qkv_width * 2 / l_.tensor;
    const double output = tokens_ * static_cast<double>(m_.query_width()) * 2 / l_.tensor;
    return 2 * (collective_seconds(TimedOp::all_to_all, inputs, l_.context, l_.tensor) +
                collective_seconds(TimedOp::all_to_all, output, l_.context, l_.tensor));
  }

  // The width of the keys and values context parallelism moves per token (all heads).
  double context_kv_width() const {
    if (m_.latent_attention) {
      return static_cast<double>(m_.heads) *
             static_cast<double>(m_.latent_attention->qk_nope_head_dim +
                                 m_.latent_attention->qk_rope_head_dim +
                                 m_.latent_attention->v_head_dim);
    }
    const std::int64_t heads =
        job_.software.kv_heads_repeated_for_attention ? m_.heads : m_.kv_heads;
    return 2.0 * static_cast<double>(heads * m_.head_dim);
  }

  // PyTorch's context_parallel with its "allgather" rotate method. Each forward gathers every
  // rank's K and V while the first of its cp attention kernels (the local, causal one) runs,
  // then merges each later kernel's output and log-sum-exp into fp32 buffers. The backward
  // gathers K and V again and passes each step's K and V gradients on in fp32, beside that
  // step's kernel, accumulating them and Q's gradient in fp32. Full recompute runs the forward
  // twice.
  double gathered_context_seconds(double attention_forward_s, double attention_backward_s) const {
    const double cp = l_.context;
    const double kv_bytes = tokens_ * context_kv_width() * 2 / l_.tensor;
    const double gather_s = collective_seconds(TimedOp::all_gather, cp * kv_bytes, l_.context,
                                               l_.tensor);
    const double gradient_pass_s =
        collective_seconds(TimedOp::permute, 2 * kv_bytes, l_.context, l_.tensor);
    const double forward_passes = job_.recompute == Recompute::full ? 2 : 1;
    const double forward_exposed = std::max(0.0, gather_s - attention_forward_s / cp);
    const double backward_exposed = std::max(0.0, gather_s - attention_backward_s / cp) +
                                    cp * std::max(0.0, gradient_pass_s - attention_backward_s / cp);
    // Element-wise traffic: a forward merge casts the step's output to fp32 and rewrites the
    // running output (2 + 4 + 4 + 4 + 4 bytes an element); a backward step adds its Q, K and V
    // gradients, cast to fp32, into their accumulators (2 + 4 + 4 bytes an element).
    const double query_elements = tokens_ * static_cast<double>(m_.query_width()) / l_.tensor;
    const double kv_elements = kv_bytes / 2;
    const double merge_bytes = forward_passes * (cp - 1) * kForwardMergeBytesPerElement *
                               query_elements;
    const double accumulate_bytes =
        cp * kGradientAccumulateBytesPerElement * (query_elements + kv_elements);
    return forward_passes * forward_exposed + backward_exposed +
           streaming_seconds(merge_bytes + accumulate_bytes);
  }

  // One dispatch or combine of the rank's token copies over the expert group, `element_bytes`
  // per value.
  double expert_exchange_seconds(double element_bytes) const {
    const MixtureOfExperts& moe = *m_.moe;
    const double tokens = job_.moe_imbalance * tokens_ / l_.tensor;
    const double h = static_cast<double>(m_.d_model);
    const int per_node = ranks_per_node(l_.expert, 1, fabric_.devices_per_node);
    const int nodes = (l_.expert + per_node - 1) / per_node;
    const bool hierarchical = !a_.tpu && job_.software.hierarchical_expert_dispatch_on_blackwell &&
                              a_.generation == cost_model::GpuGeneration::blackwell;
    if (!hierarchical || nodes == 1) {
      return collective_seconds(TimedOp::all_to_all, tokens * moe.top_k * h * element_bytes,
                                l_.expert, 1);
    }
    // Balanced routing: a token's top_k experts fall on a given node with the probability that
    // not all of them avoid it; it crosses the network once per other node it reaches.
    const double experts = static_cast<double>(moe.experts);
    const double experts_per_node = experts / nodes;
    double misses = 1;
    for (std::int64_t i = 0; i < moe.top_k; ++i) {
      misses *= std::max(0.0, experts - experts_per_node - i) / (experts - i);
    }
    const double remote_nodes = (nodes - 1) * (1 - misses);
    const cost_model::DocumentedTiming documented = cost_model::documented_timing(fabric_);
    const double network_share = fabric_.measured.network_efficiency.value_or(
        documented.network_efficiency);
    const double nic_bytes_per_s = static_cast<double>(fabric_.nic_bytes_per_s) *
                                   fabric_.nics_per_node / fabric_.devices_per_node *
                                   network_share;
    const double network_s = tokens * remote_nodes * h * element_bytes / nic_bytes_per_s;
    const double scale_up_bytes_per_s =
        static_cast<double>(fabric_.scale_up_bytes_per_s) *
        fabric_.measured.scale_up_efficiency.value_or(documented.scale_up_efficiency);
    const double scale_up_s = tokens * moe.top_k * h * element_bytes / scale_up_bytes_per_s;
    const double latency_s =
        seconds(fabric_.measured.network_latency_ps.value_or(documented.network_latency_ps));
    return std::max(network_s, scale_up_s) + latency_s;
  }

  // One micro-batch's activations sent to the next stage and their gradient received back, on
  // the critical path of a plain 1F1B schedule (Megatron sends them blocking); interleaved
  // schedules overlap them with the other chunks' compute (overlap_p2p_comm). With sequence
  // parallelism each tensor rank sends its 1/tp share.
  double pipeline_transfer_seconds() const {
    if (l_.pipeline <= 1 || l_.virtual_stages > 1) return 0;
    const double bytes = tokens_ * static_cast<double>(m_.d_model) * 2 / l_.tensor;
    const int stage_stride = l_.tensor * l_.context * l_.data;
    return 2 * collective_seconds(TimedOp::permute, bytes, 2, stage_stride);
  }

  double logits_seconds() const {
    const double h = static_cast<double>(m_.d_model);
    const double forward = gemm_seconds(a_, MatmulPrecision::bf16,
                                        GemmShape{tokens_, m_.vocabulary / double(l_.tensor), h});
    // The loss reads the logits in fp32, forward and backward.
    const double loss = streaming_seconds(tokens_ * m_.vocabulary / double(l_.tensor) * 4 * 3);
    return (1 + kBackwardToForward) * forward + loss;
  }

  double data_parallel_seconds(double micro_batch_s, double micro_batches) const {
    const StageParameters p = stage_parameters(job_);
    const int dense_group = l_.data * l_.context;
    const int expert_group = std::max(1, dense_group * l_.tensor / l_.expert);
    const int stride = l_.tensor;
    const double grad_bytes = job_.software.gradient_reduce_bytes;
    // One micro-batch's forward and backward, which the first gathers and the last reductions
    // overlap.
    const double forward_share = 1.0 / (2 + kBackwardToForward);
    if (l_.fsdp > 1) {
      const int fsdp = l_.fsdp * l_.context;  // the frameworks shard over context ranks too
      // Every micro-batch gathers each layer's weights forward and backward and
      // reduce-scatters its gradients; the compute of the micro-batch hides them.
      const double gather =
          collective_seconds(TimedOp::all_gather, p.dense * 2, fsdp, stride) +
          collective_seconds(TimedOp::all_gather, p.expert * 2, std::max(1, fsdp / l_.expert),
                             stride * l_.expert);
      const double reduce =
          collective_seconds(TimedOp::reduce_scatter, p.dense * grad_bytes, fsdp, stride) +
          collective_seconds(TimedOp::reduce_scatter, p.expert * grad_bytes,
                             std::max(1, fsdp / l_.expert), stride * l_.expert);
      const double gathers = l_.reshard_after_forward ? 2 : 1;
      const double per_micro_batch = gathers * gather + reduce;
      double exposed = micro_batches * std::max(0.0, per_micro_batch - micro_batch_s);
      const int replicas = dense_group / fsdp;
      if (replicas > 1) {  // HSDP: the shards' gradients all-reduced across replicas
        exposed += collective_seconds(TimedOp::all_reduce, p.dense * grad_bytes / fsdp,
                                      replicas, stride * fsdp);
      }
      return exposed;
    }
    double reduce = 0, gather = 0;
    if (l_.distributed_optimizer) {
      reduce = collective_seconds(TimedOp::reduce_scatter, p.dense * grad_bytes, dense_group, stride) +
               collective_seconds(TimedOp::reduce_scatter, p.expert * grad_bytes, expert_group,
                                  stride * l_.expert);
      gather = collective_seconds(TimedOp::all_gather, p.dense * 2, dense_group, stride) +
               collective_seconds(TimedOp::all_gather, p.expert * 2, expert_group,
                                  stride * l_.expert);
    } else {
      reduce = collective_seconds(TimedOp::all_reduce, p.dense * grad_bytes, dense_group, stride) +
               collective_seconds(TimedOp::all_reduce, p.expert * grad_bytes, expert_group,
                                  stride * l_.expert);
    }
    return std::max(0.0, reduce - (1 - forward_share) * micro_batch_s) +
           std::max(0.0, gather - forward_share * micro_batch_s);
  }

  double optimizer_seconds() const {
    const StageParameters p = stage_parameters(job_);
    const double dense_shards = l_.fsdp > 1 ? l_.fsdp * l_.context
                                            : (l_.distributed_optimizer ? l_.data * l_.context : 1);
    const double expert_shards =
        std::max(1.0, dense_shards * l_.tensor / static_cast<double>(l_.expert));
    const double owned = p.dense / dense_shards + p.expert / expert_shards;
    return streaming_seconds(owned * kAdamBytesPerParameter);
  }

  const TrainingJob& job_;
  const cost_model::Fabric& fabric_;
  const Accelerator& a_;
  const ParallelLayout& l_;
  const ModelShape& m_;
  double tokens_ = 0;  // one micro-batch's tokens on one device of a context group
};

}  // namespace

StepTime predict_step(const TrainingJob& job, const cost_model::Fabric& fabric) {
  return StepModel(job, fabric).predict();
}

cost_model::Fabric fabric_of(const Accelerator& accelerator) {
  if (accelerator.tpu) return cost_model::Fabric{};  // its collectives go over ICI instead
  const std::optional<sim::MachineSpec> machine = machine_preset(accelerator.preset);
  if (!machine || !machine->fabric) {
    throw Error(fmt::format("accelerator {}: preset '{}' has no fabric; expected a GPU preset",
                            accelerator.name, accelerator.preset));
  }
  return *machine->fabric;
}

}  // namespace spmd::training
