#include "workloads/transformer_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "reference/error.h"

namespace spmd {
namespace {

constexpr std::string_view kPositive = "a positive integer";
// Model sizes and counts fit 32 bits, so that the products the step forms (tokens x widths,
// parameters x bytes) fit 64 bits.
constexpr std::int64_t kMostPerField = std::numeric_limits<std::int32_t>::max();

std::int64_t required_count(const JsonValue& j, std::string_view key) {
  return j.required(key, kPositive).integer(1, kMostPerField, kPositive);
}

std::int64_t optional_count(const JsonValue& j, std::string_view key, std::int64_t fallback) {
  const std::optional<JsonValue> value = j.optional(key);
  return value ? value->integer(1, kMostPerField, kPositive) : fallback;
}

int optional_degree(const JsonValue& j, std::string_view key) {
  const std::optional<JsonValue> value = j.optional(key);
  return value ? value->positive_int32() : 1;
}

// A degree, or "auto" (0): the devices the other degrees leave.
int data_degree(const JsonValue& j) {
  const std::optional<JsonValue> value = j.optional("data");
  if (!value) return 1;
  if (value->is_string()) {
    if (value->string() != "auto") value->fail_value("a positive integer or \"auto\"");
    return 0;
  }
  return value->positive_int32();
}

bool optional_flag(const JsonValue& j, std::string_view key, bool fallback) {
  const std::optional<JsonValue> value = j.optional(key);
  return value ? value->boolean() : fallback;
}

Recompute parse_recompute(const JsonValue& value) {
  constexpr std::string_view kExpected = "none, selective or full";
  const std::string text = value.string(kExpected);
  if (text == "none") return Recompute::none;
  if (text == "selective") return Recompute::selective;
  if (text == "full") return Recompute::full;
  value.fail_value(kExpected);
}

Optimizer parse_optimizer(const JsonValue& value) {
  constexpr std::string_view kExpected = "adam or sgd";
  const std::string text = value.string(kExpected);
  if (text == "adam") return Optimizer::adam;
  if (text == "sgd") return Optimizer::sgd;
  value.fail_value(kExpected);
}

double parse_efficiency(const JsonValue& value) {
  // At least 0.001: below it a step's compute time passes what 64-bit picoseconds hold.
  constexpr std::string_view kExpected = "a fraction of peak in [0.001, 1]";
  if (!value.is_number()) value.fail_type(kExpected);
  const double fraction = value.json().get<double>();
  if (!(fraction >= 0.001 && fraction <= 1.0)) value.fail_value(kExpected);
  return fraction;
}

// `field`'s value must be a multiple of `divisor` (named by `divisor_text`).
void require_multiple(const JsonValue& j, std::string_view field, std::int64_t value,
                      std::int64_t divisor, std::string_view divisor_text) {
  if (value % divisor == 0) return;
  j.fail(fmt::format("{}: {}, expected a multiple of {} ({})", field, value, divisor_text,
                     divisor));
}

void check_shapes_agree(const JsonValue& j, const TransformerSpec& s) {
  // Checked first: the products below (devices(), data x fsdp x micro_batch_size) then fit.
  const double devices =
      static_cast<double>(std::max(s.data, 1)) * s.fsdp * s.tensor * s.pipeline * s.context;
  if (devices > static_cast<double>(kMostPerField)) {
    j.fail(fmt::format("data x fsdp x tensor x pipeline x context: {:.0f} devices, expected at "
                       "most {}",
                       devices, kMostPerField));
  }
  require_multiple(j, "d_model", s.d_model, s.heads, "heads");
  require_multiple(j, "heads", s.heads, s.kv_heads, "kv_heads");
  require_multiple(j, "heads", s.heads, s.tensor, "tensor");
  require_multiple(j, "kv_heads", s.kv_heads, s.tensor, "tensor");
  require_multiple(j, "d_ff", s.d_ff, s.tensor, "tensor");
  require_multiple(j, "vocabulary", s.vocabulary, s.tensor, "tensor");
  require_multiple(j, "layers", s.layers, s.pipeline, "pipeline");
  require_multiple(j, "sequence", s.sequence, s.context, "context");
  if (s.data > 0) {  // "auto": checked once the device count is known
    require_multiple(j, "global_batch", s.global_batch,
                     std::int64_t{s.data} * s.fsdp * s.micro_batch_size,  // < 2^62
                     "data x fsdp x micro_batch_size");
  }
  if (s.sequence_parallel) {
    require_multiple(j, "micro_batch_size x sequence / context", s.micro_batch_tokens(), s.tensor,
                     "tensor, for sequence_parallel");
  }
}

}  // namespace

void require_transformer_fields(const JsonValue& j) {
  j.require_object({"kind", "name", "dtype", "steps", "overlap", "layers", "d_model", "heads",
                    "kv_heads", "d_ff", "vocabulary", "gated_mlp", "sequence", "global_batch",
                    "micro_batch_size", "data", "fsdp", "tensor", "pipeline", "context",
                    "sequence_parallel", "distributed_optimizer", "optimizer",
                    "optimizer_state_dtype", "recompute", "matmul_efficiency"});
}

TransformerSpec transformer_spec_from_json(const JsonValue& j, DType dtype, bool overlap) {
  TransformerSpec s;
  s.dtype = dtype;
  s.overlap = overlap;
  s.layers = required_count(j, "layers");
  s.d_model = required_count(j, "d_model");
  s.heads = required_count(j, "heads");
  s.kv_heads = optional_count(j, "kv_heads", s.heads);
  s.d_ff = required_count(j, "d_ff");
  s.vocabulary = required_count(j, "vocabulary");
  s.gated_mlp = optional_flag(j, "gated_mlp", true);
  s.sequence = required_count(j, "sequence");
  s.global_batch = required_count(j, "global_batch");
  s.micro_batch_size = optional_count(j, "micro_batch_size", 1);
  s.data = data_degree(j);
  s.fsdp = optional_degree(j, "fsdp");
  s.tensor = optional_degree(j, "tensor");
  s.pipeline = optional_degree(j, "pipeline");
  s.context = optional_degree(j, "context");
  s.sequence_parallel = optional_flag(j, "sequence_parallel", false);
  s.distributed_optimizer = optional_flag(j, "distributed_optimizer", false);
  if (const std::optional<JsonValue> optimizer = j.optional("optimizer")) {
    s.optimizer = parse_optimizer(*optimizer);
  }
  if (const std::optional<JsonValue> state = j.optional("optimizer_state_dtype")) {
    s.optimizer_state_dtype = state->named("a dtype name such as \"float32\"", dtype_from_name);
  }
  if (const std::optional<JsonValue> recompute = j.optional("recompute")) {
    s.recompute = parse_recompute(*recompute);
  }
  if (const std::optional<JsonValue> efficiency = j.optional("matmul_efficiency")) {
    s.matmul_efficiency = parse_efficiency(*efficiency);
  }
  check_shapes_agree(j, s);
  return s;
}

TransformerSpec transformer_for_devices(const TransformerSpec& spec, int devices) {
  TransformerSpec s = spec;
  if (s.data == 0) {
    const std::int64_t others = std::int64_t{s.fsdp} * s.tensor * s.pipeline * s.context;
    if (devices % others != 0) {
      throw Error(fmt::format("workload.data: \"auto\" on {} devices, expected a device count "
                              "that fsdp x tensor x pipeline x context ({}) divides",
                              devices, others));
    }
    s.data = static_cast<int>(devices / others);
    const std::int64_t replicas_batch = std::int64_t{s.data} * s.fsdp * s.micro_batch_size;
    if (s.global_batch % replicas_batch != 0) {
      throw Error(fmt::format("workload.global_batch: {}, expected a multiple of data x fsdp x "
                              "micro_batch_size ({}, with data \"auto\" = {} on {} devices)",
                              s.global_batch, replicas_batch, s.data, devices));
    }
  }
  if (s.devices() != devices) {
    throw Error(fmt::format(
        "workload: data {} x fsdp {} x tensor {} x pipeline {} x context {} = {} devices, "
        "expected the machine's {}",
        s.data, s.fsdp, s.tensor, s.pipeline, s.context, s.devices(), devices));
  }
  return s;
}

std::string_view recompute_name(Recompute recompute) {
  switch (recompute) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "none";
}

}  // namespace spmd
