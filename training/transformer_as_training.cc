#include "training/transformer_as_training.h"

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "reference/dtype.h"
#include "reference/error.h"
#include "support/json_reader.h"
#include "workloads/transformer_spec.h"

namespace spmd::training {
namespace {

// The training workload's `precision` for a transformer's `dtype`: its 16-bit formats.
std::string precision_of(const JsonValue& dtype_field) {
  const DType dtype = dtype_field.named("a dtype name such as \"bfloat16\"", dtype_from_name);
  if (dtype == DType::bfloat16) return "bf16";
  if (dtype == DType::float16) return "fp16";
  dtype_field.fail_value(
      "bfloat16 or float16 (the training model's 16-bit formats; leave dtype out to search "
      "every precision the GPU has)");
}

// The fields the training model has no counterpart for, where they ask for something else than
// what it models.
void require_what_the_training_model_honours(const JsonValue& j, const TransformerSpec& s) {
  if (j.has("optimizer") && s.optimizer != Optimizer::adam) {
    j.required("optimizer", "").fail_value("adam (the training model's optimizer) or left out");
  }
  if (j.has("optimizer_state_dtype") && s.optimizer_state_dtype != DType::float32) {
    j.required("optimizer_state_dtype", "")
        .fail_value("float32 (Adam's moments as the training model holds them) or left out");
  }
  if (const std::optional<JsonValue> efficiency = j.optional("matmul_efficiency")) {
    efficiency->fail_value(
        "left out: plan's training model times each GEMM by its shape on the GPU "
        "(docs/training-model.md)");
  }
  if (!s.overlap) {
    j.required("overlap", "").fail_value("true or left out: the training model overlaps the gradient reductions "
                        "with the backward, as the frameworks do");
  }
  const std::optional<JsonValue> sequence_parallel = j.optional("sequence_parallel");
  const bool tensor_held_at_one = j.has("tensor") && s.tensor == 1;
  if (sequence_parallel && !s.sequence_parallel && !tensor_held_at_one) {
    sequence_parallel->fail_value(
        "true or left out: the training model runs Megatron's sequence parallelism with every "
        "tensor group (or hold tensor at 1)");
  }
}

// The degrees and sharding the file gives: dp is data x fsdp (the training workload's fsdp shards
// over its data ranks); distributed_optimizer is ZeRO-1 without FSDP, and FSDP shards the
// optimizer anyway.
void add_layout(const JsonValue& j, const TransformerSpec& s, nlohmann::json& training) {
  if (j.has("tensor")) training["tp"] = s.tensor;
  if (j.has("pipeline")) training["pp"] = s.pipeline;
  if (j.has("context")) training["cp"] = s.context;
  if (j.has("fsdp")) training["fsdp"] = s.fsdp;
  if (j.has("data") && s.data > 0) training["dp"] = std::int64_t{s.data} * s.fsdp;
  if (j.has("distributed_optimizer") && s.fsdp == 1) {
    training["zero_stage"] = s.distributed_optimizer ? 1 : 0;
  }
  if (j.has("micro_batch_size")) training["micro_batch"] = s.micro_batch_size;
  if (j.has("recompute")) training["recompute"] = std::string(recompute_name(s.recompute));
  if (const std::optional<JsonValue> dtype = j.optional("dtype")) {
    training["precision"] = precision_of(*dtype);
  }
}

nlohmann::json training_workload(const JsonValue& j) {
  require_transformer_fields(j);
  // Read as `run` reads it: every value, and the shapes' agreement, checked (dtype on its own).
  const std::optional<JsonValue> overlap = j.optional("overlap");
  const TransformerSpec s =
      transformer_spec_from_json(j, DType::bfloat16, overlap ? overlap->boolean() : true);
  require_what_the_training_model_honours(j, s);
  nlohmann::json training = {{"kind", "training"},
                             {"layers", s.layers},
                             {"d_model", s.d_model},
                             {"heads", s.heads},
                             {"kv_heads", s.kv_heads},
                             {"d_ff", s.d_ff},
                             {"vocabulary", s.vocabulary},
                             {"seq_len", s.sequence},
                             {"global_batch_seqs", s.global_batch}};
  if (const std::optional<JsonValue> name = j.optional("name")) training["name"] = name->string();
  // The training model knows a two-matrix MLP as the GPT family's (docs/training-model.md).
  if (!s.gated_mlp) training["model"] = "GPT";
  add_layout(j, s, training);
  return training;
}

}  // namespace

nlohmann::json training_workload_of_transformer(const nlohmann::json& transformer,
                                                const std::string& file_name) {
  try {
    return training_workload(JsonValue::at_path(transformer, "workload"));
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", file_name, e.what()));
  }
}

}  // namespace spmd::training
