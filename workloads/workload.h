#pragma once
// Built-in workloads for `spmdsim run` and `spmdsim scale`, described by a JSON file
// (docs/workload-format.md): a data-parallel MLP training step, a transformer-like layer under
// shard_map with data and model axes, a list of collectives, or a whole transformer's training
// step (workloads/transformer_step.h). They run on the simulator
// without data (Context::collective_cost, charge_compute, hold_memory), so sizes can be those of
// real models.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "reference/dtype.h"
#include "sim/cost_log.h"
#include "sim/machine.h"
#include "workloads/transformer_spec.h"

namespace spmd {

enum class WorkloadKind { mlp_data_parallel, transformer_layer, collectives, transformer };

struct CollectiveSpec {
  std::string op;          // all_reduce, all_gather, reduce_scatter, all_to_all, ppermute
  std::int64_t bytes = 0;  // per device, nccl-tests' S (all_gather: the gathered result)
  DType dtype = DType::float32;
  // What this call forces the collective library to run ("nccl_algo", "nccl_proto"), on a
  // machine with a fabric; unset, the run's or the machine's choice, else the fastest.
  cost_model::LibraryChoice library;
};

struct Workload {
  WorkloadKind kind = WorkloadKind::mlp_data_parallel;
  std::string name = "workload";
  DType dtype = DType::float32;
  int steps = 1;
  // mlp_data_parallel: layer widths, input first; samples per device.
  std::vector<std::int64_t> layers;
  std::int64_t batch_per_device = 0;
  // transformer_layer: devices = data * model; tokens per data shard = batch * sequence.
  int model_parallel = 1;
  std::int64_t sequence = 0;
  std::int64_t d_model = 0;
  std::int64_t d_ff = 0;
  // mlp_data_parallel and transformer_layer: each layer's gradient reduction starts as soon as
  // the backward pass has computed it, on one communication stream, all waited before the
  // update (as PyTorch DDP / XLA's async all-reduce); false: the blocking reductions after the
  // whole backward pass.
  bool overlap = true;
  // collectives
  std::vector<CollectiveSpec> calls;
  // transformer (workloads/transformer_spec.h); its dtype and overlap are the fields above.
  TransformerSpec transformer;
};

// The per-device input element count that gives `spec.bytes` as nccl-tests counts it (rounded
// down to a multiple of the devices where the op splits its input).
std::int64_t collective_input_elements(const CollectiveSpec& spec, int devices);

// The call for `spec` over axis "i" of `devices` devices (ppermute: each device to the next).
CollectiveCall collective_call_for(const CollectiveSpec& spec, int devices);

// spmd::Error naming the field ("workload.layers[1]: ...") for bad or unknown fields.
Workload workload_from_json(const nlohmann::json& json);
Workload load_workload_file(const std::string& path);

// Runs `steps` steps on the machine (one Machine::run each) and returns their joined cost log.
// spmd::Error if the workload cannot be laid out on the machine's devices.
sim::CostLog run_workload(sim::Machine& machine, const Workload& workload);

// A transformer step's checks before it runs (the per-run collective limit, the memory
// capacity): spmd::Error naming what does not fit.
void check_transformer_run(const Workload& workload, const TransformerSpec& spec,
                           const sim::Machine& machine);

}  // namespace spmd
