#pragma once
// What one device holds during a `transformer` training step, by part (docs/workload-format.md,
// "transformer", "Memory"):
//  - weights and gradients: its pipeline stage's layers (plus the embedding table on the first
//    stage and the output layer on the last), split over `tensor` and `fsdp`, in `dtype`;
//  - optimizer states: Adam's m and v in optimizer_state_dtype, plus fp32 master weights when
//    dtype is not float32 (ZeRO's 2 + 2 + 12 bytes per parameter in bf16); SGD: the master
//    weights only; split over `data` too with distributed_optimizer;
//  - FSDP's gathered weights: two layers (the one computing, the one prefetched);
//  - activations: Korthikanti et al. 2022 (arXiv 2205.05198, §4) per layer and micro-batch,
//    s·b·h·(34 + 5·a·s/h) bytes in 16-bit types, with their split over tensor parallelism
//    (10 + 24/t without sequence parallelism, all of it over t with it), selective recompute
//    (no s² terms) and full recompute (the layer input, 2·s·b·h), generalised to grouped-query
//    attention, gated MLPs and d_ff ≠ 4·d_model; times the micro-batches a 1F1B stage holds
//    (p - stage, at most the micro-batches); plus the fp32 logits (4·s·b·V/t) on the last stage.

#include <cstdint>
#include <string>

#include "workloads/transformer_spec.h"

namespace spmd {

// Bytes, as doubles: a model too large for any device still gets an error naming its parts.
struct TransformerMemory {
  double weights = 0;
  double gradients = 0;
  double optimizer_states = 0;
  double gathered_weights = 0;  // FSDP
  double activations = 0;
  std::int64_t micro_batches_in_flight = 0;
  double total() const {
    return weights + gradients + optimizer_states + gathered_weights + activations;
  }
  // "weights 16.1 GB, gradients 16.1 GB, optimizer states 64.2 GB, activations 9.7 GB (8
  // micro-batches)"; FSDP's gathered weights only when held.
  std::string parts_text() const;
};

// One layer's activations for one micro-batch on one device, in bytes.
double layer_activation_bytes(const TransformerSpec& spec);

TransformerMemory stage_memory(const TransformerSpec& spec, int stage);

// The stage whose devices hold the most (the first on ties).
int fullest_stage(const TransformerSpec& spec);

// sim::OutOfMemoryError when the fullest stage does not fit `capacity_bytes`: "transformer: device
// D (pipeline stage S) needs 97.3 GB (weights ..., ...) but has 80.0 GB".
void check_transformer_fits(const TransformerSpec& spec, std::int64_t capacity_bytes);

// "97.3 GB" (10^9 bytes, one decimal).
std::string gigabytes_text(double bytes);

}  // namespace spmd
