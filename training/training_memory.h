#pragma once
// What one device holds at its peak during a training step, by part, as the frameworks allocate
// it (docs/training-model.md, "Memory"): bf16 weights, gradients in the reduction's dtype, Adam's
// fp32 master weights and moments (sharded by the distributed optimizer or FSDP), FSDP's gathered
// layers, the activations the pipeline schedule keeps in flight, the last stage's fp32 logits,
// and the runtime's own: the CUDA context, NCCL's buffers and the caching allocator's slack.

#include <string>

#include "training/training_job.h"

namespace spmd::training {

struct TrainingMemory {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double gathered_weights_bytes = 0;  // FSDP: the layer computing and the one prefetched
  double activations_bytes = 0;
  double logits_bytes = 0;
  double runtime_bytes = 0;  // CUDA context, communication buffers
  double allocator_slack_bytes = 0;
  double total_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + gathered_weights_bytes +
           activations_bytes + logits_bytes + runtime_bytes + allocator_slack_bytes;
  }
  // "weights 16.1 GB, gradients 8.0 GB, ..." (10^9 bytes).
  std::string parts_text() const;
};

// One layer's activations for one micro-batch as the backward pass needs them kept, on one
// device (bf16 tensors, the GEMM inputs in the matmul's operand format).
double layer_activation_bytes(const TrainingJob& job, bool moe_layer);

// The fullest device: the first pipeline stage (most micro-batches in flight) or the last (the
// logits), whichever holds more.
TrainingMemory peak_memory(const TrainingJob& job);

}  // namespace spmd::training
