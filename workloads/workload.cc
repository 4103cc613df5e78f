#include "workloads/workload.h"

#include <fmt/format.h>

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "reference/error.h"
#include "sim/library_choice_json.h"
#include "support/checked_math.h"
#include "support/json_reader.h"
#include "support/units.h"
#include "workloads/transformer_memory.h"
#include "workloads/transformer_step.h"

namespace spmd {
namespace {

using nlohmann::json;

// ---- Reading

constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();
constexpr std::string_view kPositive = "a positive integer";

std::int64_t positive_int64(const JsonValue& value) {
  return value.integer(1, kMaxInt64, kPositive);
}

DType parse_dtype(const JsonValue& value) {
  return value.named("a dtype name such as \"float32\"", dtype_from_name);
}

// A positive integer, or a size with a unit ("64MiB").
std::int64_t bytes_value(const JsonValue& value) {
  if (value.is_number()) return positive_int64(value);
  return parse_bytes(value.string("a positive integer or a size such as \"64MiB\""), value.path());
}

CollectiveSpec collective_spec(const JsonValue& call, DType default_dtype) {
  call.require_object({"op", "bytes", "dtype", "nccl_algo", "nccl_proto"});
  constexpr std::string_view kOps =
      "all_reduce, all_gather, reduce_scatter, all_to_all or ppermute";
  static const std::set<std::string, std::less<>> ops = {
      "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "ppermute"};
  CollectiveSpec spec;
  const JsonValue op = call.required("op", kOps);
  spec.op = op.string(kOps);
  if (!ops.contains(spec.op)) op.fail_value(kOps);
  spec.bytes = bytes_value(call.required("bytes", "a size in bytes"));
  const std::optional<JsonValue> dtype = call.optional("dtype");
  spec.dtype = dtype ? parse_dtype(*dtype) : default_dtype;
  spec.library = sim::library_choice_from_json(call, {"nccl_algo", "nccl_proto"});
  return spec;
}

void read_kind_fields(const JsonValue& j, Workload& w) {
  switch (w.kind) {
    case WorkloadKind::mlp_data_parallel: {
      constexpr std::string_view kWidths = "at least 2 widths";
      const JsonValue layers = j.required("layers", kWidths);
      const std::vector<JsonValue> widths = layers.elements(kWidths);
      if (widths.size() < 2) layers.fail_value(kWidths);
      for (const JsonValue& width : widths) w.layers.push_back(positive_int64(width));
      w.batch_per_device = positive_int64(j.required("batch_per_device", kPositive));
      return;
    }
    case WorkloadKind::transformer_layer:
      w.model_parallel = j.required("model_parallel", kPositive).positive_int32();
      w.batch_per_device = positive_int64(j.required("batch_per_device", kPositive));
      w.sequence = positive_int64(j.required("sequence", kPositive));
      w.d_model = positive_int64(j.required("d_model", kPositive));
      w.d_ff = positive_int64(j.required("d_ff", kPositive));
      return;
    case WorkloadKind::collectives: {
      constexpr std::string_view kCalls = "a non-empty array of collectives";
      const JsonValue calls = j.required("calls", kCalls);
      const std::vector<JsonValue> entries = calls.elements(kCalls);
      if (entries.empty()) calls.fail_value(kCalls);
      for (const JsonValue& call : entries) w.calls.push_back(collective_spec(call, w.dtype));
      return;
    }
    case WorkloadKind::transformer:
      w.transformer = transformer_spec_from_json(j, w.dtype, w.overlap);
      return;
  }
}

// Fails on a field the kind does not take (a misspelt field must not be silently ignored).
void require_kind_fields(const JsonValue& j, WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::mlp_data_parallel:
      j.require_object(
          {"kind", "name", "dtype", "steps", "layers", "batch_per_device", "overlap"});
      return;
    case WorkloadKind::transformer_layer:
      j.require_object({"kind", "name", "dtype", "steps", "model_parallel", "batch_per_device",
                        "sequence", "d_model", "d_ff", "overlap"});
      return;
    case WorkloadKind::collectives:
      j.require_object({"kind", "name", "dtype", "steps", "calls"});
      return;
    case WorkloadKind::transformer: require_transformer_fields(j); return;
  }
}

WorkloadKind parse_kind(const JsonValue& value) {
  constexpr std::string_view kKinds =
      "mlp_data_parallel, transformer_layer, collectives or transformer";
  const std::string kind = value.string(kKinds);
  if (kind == "mlp_data_parallel") return WorkloadKind::mlp_data_parallel;
  if (kind == "transformer_layer") return WorkloadKind::transformer_layer;
  if (kind == "collectives") return WorkloadKind::collectives;
  if (kind == "transformer") return WorkloadKind::transformer;
  value.fail_value(kKinds);
}

// A run issues at most kMostCollectivesPerRun collectives in all (docs/workload-format.md,
// "Limits"): with data or without, each takes the simulator microseconds, so this bounds a run
// to seconds; the cost log holds a run of any length in bounded memory.
constexpr std::int64_t kMostCollectivesPerRun = 100'000;

void check_collective_count(const JsonValue& j, const Workload& w) {
  std::int64_t per_step = 1;
  if (w.kind == WorkloadKind::mlp_data_parallel) per_step = static_cast<std::int64_t>(w.layers.size());
  if (w.kind == WorkloadKind::collectives) per_step = static_cast<std::int64_t>(w.calls.size());
  // A transformer's count depends on the device count (data "auto"): checked by run_workload.
  if (w.kind == WorkloadKind::transformer) return;
  if (per_step <= kMostCollectivesPerRun / w.steps) return;
  const std::string_view list = w.kind == WorkloadKind::collectives ? "calls" : "layers";
  j.fail(fmt::format("steps {} x {} collectives per step (from {}), expected at most {} "
                     "collectives in all",
                     w.steps, per_step, list, kMostCollectivesPerRun));
}

Workload read_workload(const JsonValue& j) {
  if (!j.json().is_object()) j.fail_type("an object with a kind");
  Workload w;
  const JsonValue kind =
      j.required("kind", "mlp_data_parallel, transformer_layer, collectives or transformer");
  w.kind = parse_kind(kind);
  if (w.kind == WorkloadKind::transformer) w.dtype = DType::bfloat16;  // its default
  require_kind_fields(j, w.kind);
  const std::optional<JsonValue> name = j.optional("name");
  w.name = name ? name->string() : kind.string();
  if (const std::optional<JsonValue> dtype = j.optional("dtype")) w.dtype = parse_dtype(*dtype);
  if (const std::optional<JsonValue> steps = j.optional("steps")) w.steps = steps->positive_int32();
  if (const std::optional<JsonValue> overlap = j.optional("overlap")) w.overlap = overlap->boolean();
  read_kind_fields(j, w);
  check_collective_count(j, w);
  return w;
}

// ---- Sizes

// The largest products a step forms (parameters, activations, MACs, bytes), checked once before
// the run so that the step functions' own arithmetic cannot wrap: every term they form is
// positive and at most one of these. An overflow names the fields it comes from.
void check_sizes_fit(const Workload& w) {
  const std::int64_t e = static_cast<std::int64_t>(dtype_size_bytes(w.dtype));
  const auto mul = [](std::int64_t a, std::int64_t b, std::string_view what) {
    return checked_multiply(a, b, what);
  };
  const auto add = [](std::int64_t a, std::int64_t b, std::string_view what) {
    return checked_add(a, b, what);
  };
  switch (w.kind) {
    case WorkloadKind::mlp_data_parallel: {
      constexpr std::string_view kParams = "workload.layers: parameters";
      constexpr std::string_view kActivations =
          "workload.batch_per_device × workload.layers: activations";
      std::int64_t params = 0, activations = mul(w.batch_per_device, w.layers[0], kActivations);
      for (std::size_t i = 0; i + 1 < w.layers.size(); ++i) {
        params = add(params, add(mul(w.layers[i], w.layers[i + 1], kParams), w.layers[i + 1], kParams),
                     kParams);
        // MACs: b·wᵢ·wᵢ₊₁ (as a double later, but formed in integers first).
        mul(mul(w.batch_per_device, w.layers[i], "workload.batch_per_device × workload.layers: MACs"),
            w.layers[i + 1], "workload.batch_per_device × workload.layers: MACs");
        activations = add(activations, mul(w.batch_per_device, w.layers[i + 1], kActivations),
                          kActivations);
      }
      constexpr std::string_view kBytes = "workload: bytes of parameters and activations";
      mul(add(mul(3, params, kBytes), mul(2, activations, kBytes), kBytes), e, kBytes);
      return;
    }
    case WorkloadKind::transformer_layer: {
      const std::int64_t d = w.d_model, f = w.d_ff;
      const std::int64_t tokens =
          mul(w.batch_per_device, w.sequence, "workload.batch_per_device × workload.sequence: tokens");
      constexpr std::string_view kParams = "workload.d_model × workload.d_ff: parameters";
      const std::int64_t params =
          add(mul(4, mul(d, d, kParams), kParams), mul(2, mul(d, f, kParams), kParams), kParams);
      constexpr std::string_view kActivations =
          "workload.batch_per_device × workload.sequence × workload.d_model: activations";
      // With model_parallel 1 the step's activations are tokens · (7·d + 2·f): the most.
      const std::int64_t activations =
          mul(tokens, add(mul(7, d, kActivations), mul(2, f, kActivations), kActivations),
              kActivations);
      constexpr std::string_view kBytes = "workload: bytes of parameters and activations";
      mul(add(mul(2, params, kBytes), activations, kBytes), e, kBytes);
      return;
    }
    case WorkloadKind::collectives: return;  // each call's bytes are checked by its collective
    case WorkloadKind::transformer: return;  // fields fit 32 bits (transformer_spec.h)
  }
}

// ---- Running

std::int64_t width(DType dtype) { return static_cast<std::int64_t>(dtype_size_bytes(dtype)); }

CollectiveCall call_of(CollectiveOp op, const std::string& axis) {
  CollectiveCall call;
  call.op = op;
  call.axes = AxisNames(axis);
  call.tiled = true;
  return call;
}

// The gradient reductions of one step, started as the backward pass produces them, on the one
// communication stream (stream 0: they run in order, as DDP's buckets on NCCL's stream).
class GradientReductions {
 public:
  GradientReductions(Context& ctx, DType dtype) : ctx_(ctx), dtype_(dtype) {}
  void start(const Shape& gradient) {
    pending_.push_back(ctx_.collective_cost_start(call_of(CollectiveOp::pmean, "data"), dtype_,
                                                  gradient, {.stream = 0}));
  }
  void wait_all() {
    for (PendingCollective& p : pending_) p.wait();
    pending_.clear();
  }

 private:
  Context& ctx_;
  DType dtype_;
  std::vector<PendingCollective> pending_;
};

// The MLP's backward pass layer by layer from the last (the roofline per layer: 4·B·wᵢwᵢ₊₁
// FLOPs over its parameters twice and its activations twice), each layer's weight and bias
// gradients' pmeans started when the layer is done; all waited at the end.
void mlp_backward_overlapped(Context& ctx, const Workload& w) {
  const std::int64_t e = width(w.dtype), b = w.batch_per_device;
  GradientReductions reductions(ctx, w.dtype);
  for (std::size_t i = w.layers.size() - 1; i-- > 0;) {
    const std::int64_t in = w.layers[i], out = w.layers[i + 1];
    const std::int64_t layer_params = in * out + out;
    const std::int64_t layer_activations = b * out + (i == 0 ? b * in : 0);
    ctx.charge_compute(4.0 * static_cast<double>(b * in * out),
                       (2 * layer_params + 2 * layer_activations) * e);
    reductions.start({in, out});
    reductions.start({out});
  }
  reductions.wait_all();
}

// One step of data-parallel training: forward, backward, one pmean per gradient leaf (as
// jax.lax.pmean over the gradient pytree), SGD update. Activations are held for the step.
// With overlap, the backward pass runs layer by layer from the last, and each layer's weight and
// bias pmeans start on stream 0 as soon as it is done; all are waited before the update.
DeviceFunction mlp_step(const Workload& w) {
  return [&w](Context& ctx, const Values&) {
    const std::int64_t e = width(w.dtype);
    std::int64_t params = 0, matmul_macs = 0, activations = w.batch_per_device * w.layers[0];
    for (std::size_t i = 0; i + 1 < w.layers.size(); ++i) {
      params += w.layers[i] * w.layers[i + 1] + w.layers[i + 1];
      matmul_macs += w.batch_per_device * w.layers[i] * w.layers[i + 1];
      activations += w.batch_per_device * w.layers[i + 1];
    }
    ctx.hold_memory(2 * params * e, "parameters and gradients");
    ctx.hold_memory(activations * e, "activations");
    ctx.charge_compute(2.0 * static_cast<double>(matmul_macs), (params + activations) * e);
    if (w.overlap) {
      mlp_backward_overlapped(ctx, w);
    } else {
      ctx.charge_compute(4.0 * static_cast<double>(matmul_macs),
                         (2 * params + 2 * activations) * e);
      for (std::size_t i = 0; i + 1 < w.layers.size(); ++i) {
        ctx.collective_cost(call_of(CollectiveOp::pmean, "data"), w.dtype,
                            {w.layers[i], w.layers[i + 1]});
        ctx.collective_cost(call_of(CollectiveOp::pmean, "data"), w.dtype, {w.layers[i + 1]});
      }
    }
    ctx.charge_compute(2.0 * static_cast<double>(params), 3 * params * e);
    ctx.release_memory(activations * e);
    ctx.release_memory(2 * params * e);
    return Values{};
  };
}

// A Megatron-style layer: attention (QKV and output projections) and MLP, each split over the
// model axis with one psum of the activations per block in the forward pass and one in the
// backward pass (none when model_parallel is 1); then the parameter gradients' pmean over the data axis (with overlap: each
// block's started on stream 0 once its backward is done, all waited at the end).
DeviceFunction transformer_step(const Workload& w) {
  return [&w](Context& ctx, const Values&) {
    const std::int64_t e = width(w.dtype), m = w.model_parallel;
    const std::int64_t tokens = w.batch_per_device * w.sequence;
    const std::int64_t d = w.d_model, f = w.d_ff;
    const Shape qkv{d, 3 * d / m}, out{d / m, d}, up{d, f / m}, down{f / m, d};
    const std::int64_t params = (4 * d * d + 2 * d * f) / m;
    const std::int64_t activations = tokens * (4 * d + 3 * d / m + 2 * f / m);
    const double macs = static_cast<double>(tokens) * static_cast<double>(params) +
                        2.0 * static_cast<double>(tokens) * static_cast<double>(w.sequence) *
                            static_cast<double>(d / m);
    ctx.hold_memory(2 * params * e, "parameters and gradients");
    ctx.hold_memory(activations * e, "activations");
    const Shape activation{w.batch_per_device, w.sequence, d};
    // A one-way model split has nothing to combine: Megatron calls no all-reduce then.
    const auto combine_activations = [&] {
      if (m > 1) ctx.collective_cost(call_of(CollectiveOp::psum, "model"), w.dtype, activation);
    };
    for (int block = 0; block < 2; ++block) {  // attention, then MLP
      ctx.charge_compute(macs, (params / 2 + activations / 2) * e);
      combine_activations();
    }
    if (w.overlap) {
      // Backward from the MLP to attention; each block's activation psum stays blocking (the
      // next block needs it), its weight gradients' pmeans start on the stream at once.
      GradientReductions reductions(ctx, w.dtype);
      for (const auto& gradients : {std::vector<Shape>{up, down}, std::vector<Shape>{qkv, out}}) {
        ctx.charge_compute(2.0 * macs, (params + activations / 2) * e);
        combine_activations();
        for (const Shape& gradient : gradients) reductions.start(gradient);
      }
      reductions.wait_all();
    } else {
      for (int block = 0; block < 2; ++block) {
        ctx.charge_compute(2.0 * macs, (params + activations / 2) * e);
        combine_activations();
      }
      for (const Shape& gradient : {qkv, out, up, down}) {
        ctx.collective_cost(call_of(CollectiveOp::pmean, "data"), w.dtype, gradient);
      }
    }
    ctx.release_memory(activations * e);
    ctx.release_memory(2 * params * e);
    return Values{};
  };
}

DeviceFunction collectives_step(const Workload& w, int devices) {
  return [&w, devices](Context& ctx, const Values&) {
    for (const CollectiveSpec& spec : w.calls) {
      const sim::ScopedLibraryChoice library(ctx, spec.library);
      ctx.collective_cost(collective_call_for(spec, devices), spec.dtype,
                          {collective_input_elements(spec, devices)});
    }
    return Values{};
  };
}

}  // namespace

CollectiveCall collective_call_for(const CollectiveSpec& spec, int devices) {
  if (spec.op == "all_reduce") return call_of(CollectiveOp::psum, "i");
  if (spec.op == "all_gather") return call_of(CollectiveOp::all_gather, "i");
  if (spec.op == "reduce_scatter") return call_of(CollectiveOp::psum_scatter, "i");
  if (spec.op == "all_to_all") return call_of(CollectiveOp::all_to_all, "i");
  CollectiveCall call = call_of(CollectiveOp::ppermute, "i");
  for (int i = 0; i < devices; ++i) call.perm.emplace_back(i, (i + 1) % devices);
  return call;
}

std::int64_t collective_input_elements(const CollectiveSpec& spec, int devices) {
  const std::int64_t elements = spec.bytes / width(spec.dtype);
  if (spec.op == "all_gather") return std::max<std::int64_t>(1, elements / devices);
  if (spec.op == "reduce_scatter" || spec.op == "all_to_all") {
    return std::max<std::int64_t>(devices, elements / devices * devices);
  }
  return std::max<std::int64_t>(1, elements);
}

Workload workload_from_json(const json& j) {
  return read_workload(JsonValue::at_path(j, "workload"));
}

Workload load_workload_file(const std::string& path) {
  const json document = parse_json_file(path, "the workload file");  // its errors name the file
  try {
    return workload_from_json(document);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
}

void check_transformer_run(const Workload& w, const TransformerSpec& spec,
                           const sim::Machine& machine) {
  const std::int64_t per_step = transformer_collectives_per_step(spec);
  if (per_step > kMostCollectivesPerRun / w.steps) {
    throw Error(fmt::format("workload: steps {} x {} collectives per step (from layers, "
                            "micro-batches and pipeline ticks), expected at most {} "
                            "collectives in all",
                            w.steps, per_step, kMostCollectivesPerRun));
  }
  check_transformer_fits(spec, machine.spec().memory_bytes);
}

sim::CostLog run_workload(sim::Machine& machine, const Workload& w) {
  const int devices = machine.device_count();
  Mesh mesh({devices}, {"i"});
  DeviceFunction step;
  std::optional<TransformerSpec> resolved;  // transformer: outlives the steps that refer to it
  switch (w.kind) {
    case WorkloadKind::mlp_data_parallel:
      mesh = Mesh({devices}, {"data"});
      step = mlp_step(w);
      break;
    case WorkloadKind::transformer_layer:
      if (devices % w.model_parallel != 0 || w.d_model % w.model_parallel != 0 ||
          w.d_ff % w.model_parallel != 0) {
        throw Error(fmt::format(
            "workload.model_parallel: {}, expected a divisor of the device count ({}), d_model "
            "and d_ff",
            w.model_parallel, devices));
      }
      mesh = Mesh({devices / w.model_parallel, w.model_parallel}, {"data", "model"});
      step = transformer_step(w);
      break;
    case WorkloadKind::collectives: step = collectives_step(w, devices); break;
    case WorkloadKind::transformer: {
      const TransformerSpec& spec = resolved.emplace(transformer_for_devices(w.transformer, devices));
      check_transformer_run(w, spec, machine);
      mesh = transformer_mesh(spec);
      step = transformer_training_step(spec);
      break;
    }
  }
  check_sizes_fit(w);
  const std::vector<Values> inputs(static_cast<std::size_t>(devices));
  sim::CostLog total;
  for (int s = 0; s < w.steps; ++s) {
    machine.run(mesh, inputs, step, false);
    sim::append_run(total, machine.cost_log());
  }
  return total;
}

}  // namespace spmd
