#pragma once
// The `transformer` workload's description (docs/workload-format.md, "transformer"): a
// decoder-only model (layers, widths, heads, vocabulary), one training step's batch, how the
// devices split it (data, FSDP, tensor, pipeline and context degrees; Megatron's sequence
// parallelism and distributed optimizer), the optimizer, activation recomputation and the
// fraction of peak the matmuls reach. Read from JSON with errors naming the field; checked
// against a device count before a run.

#include <cstdint>

#include "cost_model/roofline.h"
#include "reference/dtype.h"
#include "support/json_reader.h"

namespace spmd {

enum class Recompute { none, selective, full };
enum class Optimizer { adam, sgd };

struct TransformerSpec {
  // The model.
  std::int64_t layers = 0;
  std::int64_t d_model = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;  // grouped-query attention; = heads: multi-head attention
  std::int64_t d_ff = 0;
  std::int64_t vocabulary = 0;
  bool gated_mlp = true;  // SwiGLU (Llama): three d_model x d_ff matrices; false: two (GPT)
  // One step: global_batch sequences of `sequence` tokens, in micro-batches of
  // micro_batch_size sequences per data-parallel replica.
  std::int64_t sequence = 0;
  std::int64_t global_batch = 0;
  std::int64_t micro_batch_size = 1;
  // Degrees; their product is the device count. data 0 ("auto" in JSON): the devices the others
  // leave, set by transformer_for_devices.
  int data = 1;
  int fsdp = 1;
  int tensor = 1;
  int pipeline = 1;
  int context = 1;
  bool sequence_parallel = false;      // Megatron's: LayerNorm / dropout split over `tensor`
  bool distributed_optimizer = false;  // ZeRO-1: optimizer states sharded over `data`
  Optimizer optimizer = Optimizer::adam;
  DType optimizer_state_dtype = DType::float32;  // Adam's m and v
  Recompute recompute = Recompute::none;
  // fraction of peak FLOP/s the matmuls reach (the default's source: cost_model/roofline.h)
  double matmul_efficiency = cost_model::kDefaultMatmulEfficiency;
  DType dtype = DType::bfloat16;   // weights, activations, gradients and their collectives
  bool overlap = true;             // gradient reductions and FSDP gathers overlap compute

  std::int64_t devices() const {
    return std::int64_t{data} * fsdp * tensor * pipeline * context;
  }
  // Sequences each data-parallel replica (data x fsdp of them) processes per step.
  std::int64_t sequences_per_replica() const {
    return global_batch / (std::int64_t{data} * fsdp);
  }
  std::int64_t micro_batches() const { return sequences_per_replica() / micro_batch_size; }
  std::int64_t layers_per_stage() const { return layers / pipeline; }
  std::int64_t head_dim() const { return d_model / heads; }
  std::int64_t kv_width() const { return kv_heads * head_dim(); }  // K (or V) columns
  // Tokens of one micro-batch on one device of a context group.
  std::int64_t micro_batch_tokens() const { return micro_batch_size * (sequence / context); }
};

// Fails on a field `transformer` does not take (its own and the common ones).
void require_transformer_fields(const JsonValue& workload);

// Reads the transformer fields of a workload object; spmd::Error naming the field, the value and
// what was expected, also when fields disagree (heads not a multiple of kv_heads, a global batch
// the replicas and micro-batches do not divide, ...).
TransformerSpec transformer_spec_from_json(const JsonValue& workload, DType dtype, bool overlap);

// `spec` on `devices` devices: data "auto" resolved; spmd::Error unless the degrees multiply to
// `devices` (and, with data "auto", the global batch splits over the replicas).
TransformerSpec transformer_for_devices(const TransformerSpec& spec, int devices);

std::string_view recompute_name(Recompute recompute);

}  // namespace spmd
