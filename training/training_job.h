#pragma once
// One training job as a published run describes it (docs/training-model.md): the model, how
// the devices split it, the batch, recompute, the matmul precision, the accelerator and its
// node size, and the software that ran it.

#include <cstdint>
#include <string>
#include <string_view>

#include "training/accelerator.h"
#include "training/model_shape.h"
#include "training/precision.h"
#include "training/software.h"

namespace spmd::training {

// What the backward pass recomputes instead of keeping: nothing; the framework's "selective"
// (Megatron: the attention core; torchtitan: its per-op policy, SelectiveRecompute); the MLP's
// first GEMM and activation (Megatron's recompute_modules "mlp" / "moe_act"); every layer from
// its input. Or nothing recomputed and every layer's activations offloaded to host memory
// (training/activation_offload.h).
enum class Recompute { none, selective, mlp, full, offload };

// Degrees: data x tensor x pipeline x context = devices. Expert parallelism carves the MoE
// layers' groups out of data x context (x tensor with expert tensor parallelism 1), as
// Megatron's parallel folding does; fsdp shards weights, gradients and optimizer states over
// `fsdp` of the data-parallel devices (ZeRO-3); the distributed optimizer (ZeRO-1) shards
// optimizer states over all of them.
struct ParallelLayout {
  int devices = 1;
  int data = 1;
  int tensor = 1;
  int pipeline = 1;
  int virtual_stages = 1;  // interleaved 1F1B: model chunks per pipeline rank
  int context = 1;
  int expert = 1;
  int fsdp = 1;
  // FSDP frees the gathered weights after a layer's forward and gathers them again for its
  // backward (FULL_SHARD, ZeRO-3); SHARD_GRAD_OP (ZeRO-2) and torchtitan under a pipeline keep
  // them to the backward: one gather a micro-batch, the whole stage's weights held.
  bool reshard_after_forward = true;
  bool distributed_optimizer = true;
  bool sequence_parallel = true;  // with tensor > 1
  // How context parallelism exchanges attention's inputs: ring attention passes K and V chunks
  // around the ring, hidden under the attention kernels (Megatron's default "p2p"); all_gather
  // gathers every rank's K and V at once, then runs one attention kernel per chunk and merges
  // the partial outputs in fp32 (PyTorch's context_parallel, whose default rotate method
  // torchtitan keeps); all_to_all re-shards Q, K, V from sequence to heads and the output back
  // (DeepSpeed's Ulysses, Megatron's "a2a"), exposed.
  enum class ContextExchange { ring, all_gather, all_to_all };
  ContextExchange context_exchange = ContextExchange::ring;
};

struct Batch {
  std::int64_t sequence = 0;
  std::int64_t global_sequences = 0;
  std::int64_t micro_batch_sequences = 1;  // per data-parallel replica and micro-batch
};

struct TrainingJob {
  ModelShape model;
  // The busiest expert's tokens over the mean (1: balanced, as NVIDIA's benchmarks force): the
  // expert GEMMs and the token exchange wait for the busiest rank.
  double moe_imbalance = 1;
  ParallelLayout layout;
  Batch batch;
  Recompute recompute = Recompute::none;
  MatmulPrecision precision = MatmulPrecision::bf16;
  Accelerator accelerator;
  int devices_per_node = 8;
  Software software;

  // Micro-batches each pipeline runs per step.
  std::int64_t micro_batches() const {
    return batch.global_sequences / (std::int64_t{layout.data} * batch.micro_batch_sequences);
  }
};

std::string_view recompute_name(Recompute recompute);
// A recompute column as tables write it ("full", "selective (per-op SAC)", "minimal",
// "none", "... offload"); spmd::Error naming `where` and the text otherwise.
Recompute recompute_from_text(const std::string& text, std::string_view where);

// The parameters one device of the fullest pipeline stage holds before any data-parallel
// sharding: dense ones (attention, dense MLPs, shared experts, the embedding table) split over
// tensor, routed experts over expert.
struct StageParameters {
  double dense = 0;
  double expert = 0;
  double dense_per_layer = 0;  // one layer's dense parameters, before the tensor split
  double total() const { return dense + expert; }
};
StageParameters stage_parameters(const TrainingJob& job);

// spmd::Error naming the field and value when the layout and batch disagree with each other
// or with the model (degrees that do not multiply to the devices, a batch the replicas do not
// divide, experts the expert degree does not divide, ...). `where` starts the message.
void check_training_job(const TrainingJob& job, std::string_view where);

}  // namespace spmd::training
