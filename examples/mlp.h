#pragma once
// In C++, the tutorials' data-parallel training example (docs/examples.md: 000 "Day 015",
// 002 "14_pmap_basics", 003 "Data Parallelism with pmap"): a one-hidden-layer ReLU MLP fitted by
// gradient descent to a fixed "teacher" MLP, with pmap over 8 devices, parameters replicated
// (in_axes None), the batch sharded (in_axes 0), and gradients and loss averaged with
// ctx.pmean on the list of leaves, as jax.lax.pmean(grads, axis_name='devices') does.
//
// Everything is deterministic: data come from SplitMix64 (not <random>'s distributions, whose
// outputs differ between standard libraries), matrix products from single-threaded Eigen, and
// reductions from explicit left-to-right loops.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "reference/backend.h"
#include "support/split_mix64.h"

namespace spmd {

struct MlpConfig {
  int devices = 8;
  int samples_per_device = 16;
  int inputs = 4;
  int hidden = 16;
  int outputs = 2;
  int steps = 20;
  float learning_rate = 0.2f;
  std::uint64_t seed = 20240515;
  std::string axis_name = "devices";
};

// Parameters as the flat list of pytree leaves {w1 (in, hidden), b1 (hidden), w2 (hidden, out),
// b2 (out)}: the list ctx.pmean averages leaf by leaf.
constexpr int kMlpLeaves = 4;
Values init_mlp_params(const MlpConfig& config, SplitMix64& rng);

// The global batch with its leading device axis already split off, as the tutorials reshape it
// with X.reshape(num_devices, per_device_batch, features): x (devices, per_device, inputs),
// y (devices, per_device, outputs).
struct ShardedBatch {
  Array x;
  Array y;
};
ShardedBatch make_sharded_batch(const MlpConfig& config, SplitMix64& rng);

// Mean squared error over one shard and its gradient with respect to every leaf.
struct LossAndGrads {
  Array loss;  // float32 scalar
  Values grads;
};
LossAndGrads mlp_loss_and_grads(const Values& params, const Array& x, const Array& y);

// The per-device train step: (w1, b1, w2, b2, x, y) -> (w1', b1', w2', b2', loss), with loss and
// gradients pmean'd over `axis_name` before the update, so every replica updates identically.
// The matmuls' FLOPs and bytes are charged to the device (a cost on the simulator, nothing on
// the reference), and the activations are held in its memory for the step.
DeviceFunction data_parallel_train_step(float learning_rate, std::string axis_name);

struct TrainingStep {
  int step = 0;
  float loss = 0;                   // the pmean'd loss before the step's update
  bool replicas_identical = false;  // all devices' new parameters and losses agree bit for bit
};

struct TrainingRun {
  std::vector<TrainingStep> steps;
  Values params;  // replica 0's final parameters
};

// Runs config.steps pmapped train steps on `backend` and records every step.
// `after_step` (if set) runs after every step, e.g. to collect the simulator's cost log.
TrainingRun train_data_parallel(Backend& backend, const MlpConfig& config,
                                const std::function<void()>& after_step = {});

}  // namespace spmd
