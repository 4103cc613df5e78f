#pragma once
// What the training framework named in a description does by default, where that changes a
// step's time (docs/training-model.md, "Frameworks"): whether its element-wise kernels are
// fused (Transformer Engine, torch.compile) or run one kernel per op (PyTorch eager), whether
// attention is a flash kernel, what its "selective" recompute recomputes, and whether it
// overlaps tensor-parallel communication with the GEMMs.

#include <string_view>

#include "training/accelerator.h"

namespace spmd::training {

enum class Framework { megatron, torchtitan, llm_foundry, maxtext, pytorch, unknown };

// What a framework's "selective" activation recompute runs again in the backward pass.
// attention_core: Megatron's, the attention core only, which a flash kernel recomputes anyway.
// every_second_matmul: torchtitan's per-op policy (its llama tomls' selective_ac_option "op"
// from 2024 on): within a block it saves the outputs of aten.mm, attention and the TP
// reduce-scatter, except every second mm in forward order, and recomputes everything else.
// The even mms are the K (or V) projection, the attention output projection and one d_ff-wide
// MLP GEMM. Float8 and MX matmuls (torch._scaled_mm) and grouped expert GEMMs are not in the
// save list, so under them every matmul of the block runs again; so do the all-gathers before
// attention and the MLP under sequence parallelism.
enum class SelectiveRecompute { attention_core, every_second_matmul };

// How tensor-parallel collectives hide under the GEMMs.
// every_collective: Megatron's userbuffers overlap (NVIDIA's performance recipes) pipelines
// each all-gather and reduce-scatter, forward and backward, with its GEMM.
// matmul_adjacent: PyTorch's micro-pipeline TP (torchtitan's async TP) fuses an all-gather that
// feeds matmuls and a reduce-scatter fed directly by one. The backward's input gradients of the
// column-parallel projections (Q, K, V and the MLP's two input GEMMs) are sums of matmuls, so
// their reduce-scatters stay plain NCCL calls, exposed; each fused reduce-scatter ends with a
// sum of the tp partial results, a pass over the whole matmul output.
enum class TensorParallelOverlap { none, every_collective, matmul_adjacent };

struct Software {
  Framework framework = Framework::unknown;
  // Norms, activations, RoPE and residuals fused into few kernels. Eager PyTorch launches one
  // kernel per op, each reading and writing whole activations.
  bool fused_elementwise = true;
  // Flash attention: no s² scores in memory. Frameworks before 2023 stored them.
  bool flash_attention = true;
  // PyTorch's SDPA runs FlashAttention-2; Transformer Engine, MaxText and JAX the chip's own.
  AttentionKernel attention_kernel = AttentionKernel::native;
  // What "selective" recompute runs again in the backward pass.
  SelectiveRecompute selective_recompute = SelectiveRecompute::attention_core;
  // Tensor-parallel all-gathers and reduce-scatters hidden under the GEMMs.
  TensorParallelOverlap tensor_parallel_overlap = TensorParallelOverlap::none;
  // torchtitan's Llama: Q, K and V, and the MLP's gate and up projections, are separate
  // nn.Linear GEMMs, each reading the layer's input (Megatron fuses each group into one); and
  // K and V are repeated to the query heads before attention (repeat_kv), so context
  // parallelism moves query-width keys and values.
  bool separate_input_projections = false;
  bool kv_heads_repeated_for_attention = false;
  // Bytes of one gradient element in the data-parallel reduction: fp32 unless the recipe
  // reduces in bf16 (NVIDIA's performance recipes set grad_reduce_in_fp32 off).
  double gradient_reduce_bytes = 4;
  // The loss computed from bf16 logits in one fused kernel (Transformer Engine's cross-entropy
  // fusion, torch.compile, llm-foundry's fused_crossentropy); otherwise the logits are upcast to
  // fp32 and their gradient kept beside them.
  bool fused_cross_entropy = true;
  // MoE tokens dispatched hierarchically on Blackwell (HybridEP, Megatron's "flex" dispatcher
  // in NVIDIA's Blackwell recipes; their H100 recipes keep the all-to-all dispatcher): one copy
  // per destination node over the network, then over NVLink to each expert's GPU; otherwise
  // one all-to-all of every token copy.
  bool hierarchical_expert_dispatch_on_blackwell = false;
  // Megatron's distributed optimizer (2022 on): optimizer states sharded over data parallel.
  bool distributed_optimizer = true;
};

std::string_view framework_name(Framework framework);
// The framework and its defaults at the version a description names ("Megatron-Bridge /
// Megatron-Core, NeMo container 26.08", "torchtitan 9dec370 (2024-12-26) ... torch.compile",
// "MosaicML Composer + llm-foundry ..."). An empty description gets Megatron's defaults; one that
// names no framework the model knows is an spmd::Error listing them.
Software software_from_description(std::string_view text);

}  // namespace spmd::training
