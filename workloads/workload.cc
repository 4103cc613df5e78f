#include "workloads/workload.h"

#include <fstream>
#include <set>

#include "reference/error.h"
#include "support/units.h"

namespace spmd {
namespace {

using nlohmann::json;

// ---- Reading

const json& field(const json& object, const std::string& name, const std::string& path) {
  if (!object.contains(name)) throw Error(path + "." + name + ": missing, expected a value");
  return object.at(name);
}

std::int64_t positive_integer(const json& value, const std::string& path) {
  if (!value.is_number_integer() || value.get<std::int64_t>() <= 0) {
    throw Error(path + ": " + value.dump() + ", expected a positive integer");
  }
  return value.get<std::int64_t>();
}

std::string text(const json& value, const std::string& path) {
  if (!value.is_string()) throw Error(path + ": " + value.dump() + ", expected a string");
  return value.get<std::string>();
}

void check_fields(const json& object, const std::set<std::string>& allowed,
                  const std::string& path) {
  for (const auto& [key, value] : object.items()) {
    if (!allowed.contains(key)) {
      std::string known;
      for (const std::string& name : allowed) known += (known.empty() ? "" : ", ") + name;
      throw Error(path + "." + key + ": unknown field, expected one of " + known);
    }
  }
}

std::int64_t bytes_value(const json& value, const std::string& path) {
  if (value.is_number_integer()) return positive_integer(value, path);
  return parse_bytes(text(value, path), path);
}

CollectiveSpec collective_spec(const json& call, const std::string& path, DType default_dtype) {
  if (!call.is_object()) throw Error(path + ": " + call.dump() + ", expected an object");
  check_fields(call, {"op", "bytes", "dtype"}, path);
  CollectiveSpec spec;
  spec.op = text(field(call, "op", path), path + ".op");
  static const std::set<std::string> ops = {"all_reduce", "all_gather", "reduce_scatter",
                                            "all_to_all", "ppermute"};
  if (!ops.contains(spec.op)) {
    throw Error(path + ".op: " + spec.op +
                ", expected all_reduce, all_gather, reduce_scatter, all_to_all or ppermute");
  }
  spec.bytes = bytes_value(field(call, "bytes", path), path + ".bytes");
  spec.dtype = call.contains("dtype") ? dtype_from_name(text(call["dtype"], path + ".dtype"))
                                      : default_dtype;
  return spec;
}

void read_kind_fields(const json& j, Workload& w) {
  switch (w.kind) {
    case WorkloadKind::mlp_data_parallel: {
      const json& layers = field(j, "layers", "workload");
      if (!layers.is_array() || layers.size() < 2) {
        throw Error("workload.layers: " + layers.dump() + ", expected at least 2 widths");
      }
      for (std::size_t i = 0; i < layers.size(); ++i) {
        w.layers.push_back(positive_integer(layers[i], "workload.layers[" + std::to_string(i) + "]"));
      }
      w.batch_per_device = positive_integer(field(j, "batch_per_device", "workload"),
                                            "workload.batch_per_device");
      return;
    }
    case WorkloadKind::transformer_layer:
      w.model_parallel = static_cast<int>(
          positive_integer(field(j, "model_parallel", "workload"), "workload.model_parallel"));
      w.batch_per_device = positive_integer(field(j, "batch_per_device", "workload"),
                                            "workload.batch_per_device");
      w.sequence = positive_integer(field(j, "sequence", "workload"), "workload.sequence");
      w.d_model = positive_integer(field(j, "d_model", "workload"), "workload.d_model");
      w.d_ff = positive_integer(field(j, "d_ff", "workload"), "workload.d_ff");
      return;
    case WorkloadKind::collectives: {
      const json& calls = field(j, "calls", "workload");
      if (!calls.is_array() || calls.empty()) {
        throw Error("workload.calls: " + calls.dump() + ", expected a non-empty array");
      }
      for (std::size_t i = 0; i < calls.size(); ++i) {
        w.calls.push_back(collective_spec(calls[i], "workload.calls[" + std::to_string(i) + "]",
                                          w.dtype));
      }
      return;
    }
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

// One step of data-parallel training: forward, backward, one pmean per gradient leaf (as
// jax.lax.pmean over the gradient pytree), SGD update. Activations are held for the step.
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
    ctx.charge_compute(4.0 * static_cast<double>(matmul_macs), (2 * params + 2 * activations) * e);
    for (std::size_t i = 0; i + 1 < w.layers.size(); ++i) {
      ctx.collective_cost(call_of(CollectiveOp::pmean, "data"), w.dtype,
                          {w.layers[i], w.layers[i + 1]});
      ctx.collective_cost(call_of(CollectiveOp::pmean, "data"), w.dtype, {w.layers[i + 1]});
    }
    ctx.charge_compute(2.0 * static_cast<double>(params), 3 * params * e);
    ctx.release_memory(activations * e);
    ctx.release_memory(2 * params * e);
    return Values{};
  };
}

// A Megatron-style layer: attention (QKV and output projections) and MLP, each split over the
// model axis with one psum of the activations per block in the forward pass and one in the
// backward pass; then the parameter gradients' psum over the data axis.
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
    for (int block = 0; block < 2; ++block) {  // attention, then MLP
      ctx.charge_compute(macs, (params / 2 + activations / 2) * e);
      ctx.collective_cost(call_of(CollectiveOp::psum, "model"), w.dtype, activation);
    }
    for (int block = 0; block < 2; ++block) {
      ctx.charge_compute(2.0 * macs, (params + activations / 2) * e);
      ctx.collective_cost(call_of(CollectiveOp::psum, "model"), w.dtype, activation);
    }
    for (const Shape& gradient : {qkv, out, up, down}) {
      ctx.collective_cost(call_of(CollectiveOp::pmean, "data"), w.dtype, gradient);
    }
    ctx.release_memory(activations * e);
    ctx.release_memory(2 * params * e);
    return Values{};
  };
}

DeviceFunction collectives_step(const Workload& w, int devices) {
  return [&w, devices](Context& ctx, const Values&) {
    for (const CollectiveSpec& spec : w.calls) {
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
  if (!j.is_object()) throw Error("workload: " + j.dump() + ", expected a JSON object");
  Workload w;
  const std::string kind = text(field(j, "kind", "workload"), "workload.kind");
  std::set<std::string> allowed = {"kind", "name", "dtype", "steps"};
  if (kind == "mlp_data_parallel") {
    w.kind = WorkloadKind::mlp_data_parallel;
    allowed.insert({"layers", "batch_per_device"});
  } else if (kind == "transformer_layer") {
    w.kind = WorkloadKind::transformer_layer;
    allowed.insert({"model_parallel", "batch_per_device", "sequence", "d_model", "d_ff"});
  } else if (kind == "collectives") {
    w.kind = WorkloadKind::collectives;
    allowed.insert("calls");
  } else {
    throw Error("workload.kind: " + kind +
                ", expected mlp_data_parallel, transformer_layer or collectives");
  }
  check_fields(j, allowed, "workload");
  w.name = j.contains("name") ? text(j["name"], "workload.name") : kind;
  if (j.contains("dtype")) w.dtype = dtype_from_name(text(j["dtype"], "workload.dtype"));
  if (j.contains("steps")) {
    w.steps = static_cast<int>(positive_integer(j["steps"], "workload.steps"));
  }
  read_kind_fields(j, w);
  return w;
}

Workload load_workload_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open the workload file");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw Error(path + ": not valid JSON (byte " + std::to_string(e.byte) + ")");
  }
  try {
    return workload_from_json(j);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

sim::CostLog run_workload(sim::Machine& machine, const Workload& w) {
  const int devices = machine.device_count();
  Mesh mesh({devices}, {"i"});
  DeviceFunction step;
  switch (w.kind) {
    case WorkloadKind::mlp_data_parallel:
      mesh = Mesh({devices}, {"data"});
      step = mlp_step(w);
      break;
    case WorkloadKind::transformer_layer:
      if (devices % w.model_parallel != 0 || w.d_model % w.model_parallel != 0 ||
          w.d_ff % w.model_parallel != 0) {
        throw Error("workload.model_parallel: " + std::to_string(w.model_parallel) +
                    ", expected a divisor of the device count (" + std::to_string(devices) +
                    "), d_model and d_ff");
      }
      mesh = Mesh({devices / w.model_parallel, w.model_parallel}, {"data", "model"});
      step = transformer_step(w);
      break;
    case WorkloadKind::collectives:
      step = collectives_step(w, devices);
      break;
  }
  const std::vector<Values> inputs(static_cast<std::size_t>(devices));
  sim::CostLog total;
  for (int s = 0; s < w.steps; ++s) {
    machine.run(mesh, inputs, step, false);
    sim::append_run(total, machine.cost_log());
  }
  return total;
}

}  // namespace spmd
