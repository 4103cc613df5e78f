#include "examples/mlp.h"

// One thread per simulated device already; Eigen's own threads would only add nondeterminism.
#define EIGEN_DONT_PARALLELIZE
#include <Eigen/Core>

#include "examples/example_ops.h"
#include "reference/elementwise.h"
#include "reference/pmap.h"

namespace spmd {
namespace {

// Eigen-owned copies (always aligned the same way) rather than maps of Array buffers: Eigen's
// vectorized paths may split work by the data's alignment, which must not vary between runs.
using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Matrix to_matrix(const Array& a) {
  const Eigen::Index rows = a.rank() == 1 ? 1 : a.dim(0);
  const Eigen::Index cols = a.rank() == 1 ? a.dim(0) : a.dim(1);
  Matrix m(rows, cols);
  const auto values = a.values<float>();
  std::copy(values.begin(), values.end(), m.data());
  return m;
}

Array to_array(const Matrix& m, Shape shape, VaryingAxes varying) {
  Array out(DType::float32, std::move(shape));
  auto values = out.mutable_values<float>();
  std::copy(m.data(), m.data() + m.size(), values.begin());
  return out.with_varying_axes(varying);
}

Array random_array(Shape shape, float bound, SplitMix64& rng) {
  Array out(DType::float32, std::move(shape));
  for (float& v : out.mutable_values<float>()) v = rng.uniform(-bound, bound);
  return out;
}

// Column sums folded top to bottom (Eigen's colwise().sum() may reassociate when vectorized).
Matrix column_sums(const Matrix& m) {
  Matrix sums = Matrix::Zero(1, m.cols());
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    for (Eigen::Index c = 0; c < m.cols(); ++c) sums(0, c) += m(r, c);
  }
  return sums;
}

struct Forward {
  Matrix pre_activation;  // x w1 + b1
  Matrix hidden;          // relu(pre_activation)
  Matrix prediction;      // hidden w2 + b2
};

Forward forward(const Matrix& w1, const Matrix& b1, const Matrix& w2, const Matrix& b2,
                const Matrix& x) {
  Forward f;
  f.pre_activation = x * w1;
  f.pre_activation.rowwise() += b1.row(0);
  f.hidden = f.pre_activation.cwiseMax(0.0f);
  f.prediction = f.hidden * w2;
  f.prediction.rowwise() += b2.row(0);
  return f;
}

Values teacher_params(const MlpConfig& config, SplitMix64& rng) {
  return {random_array({config.inputs, config.hidden}, 1.0f, rng),
          random_array({config.hidden}, 0.5f, rng),
          random_array({config.hidden, config.outputs}, 0.5f, rng),
          random_array({config.outputs}, 0.5f, rng)};
}

Array predict(const Values& params, const Array& x) {
  const Forward f = forward(to_matrix(params[0]), to_matrix(params[1]), to_matrix(params[2]),
                            to_matrix(params[3]), to_matrix(x));
  return to_array(f.prediction, {x.dim(0), params[3].dim(0)}, 0);
}

}  // namespace

Values init_mlp_params(const MlpConfig& config, SplitMix64& rng) {
  return {random_array({config.inputs, config.hidden}, 0.5f, rng),
          Array(DType::float32, {config.hidden}),
          random_array({config.hidden, config.outputs}, 0.5f, rng),
          Array(DType::float32, {config.outputs})};
}

ShardedBatch make_sharded_batch(const MlpConfig& config, SplitMix64& rng) {
  const Values teacher = teacher_params(config, rng);
  const std::int64_t total = static_cast<std::int64_t>(config.devices) * config.samples_per_device;
  const Array x = random_array({total, config.inputs}, 1.0f, rng);
  const Array y = predict(teacher, x);
  return {reshape(x, {config.devices, config.samples_per_device, config.inputs}),
          reshape(y, {config.devices, config.samples_per_device, config.outputs})};
}

LossAndGrads mlp_loss_and_grads(const Values& params, const Array& x, const Array& y) {
  const Matrix w1 = to_matrix(params[0]), b1 = to_matrix(params[1]);
  const Matrix w2 = to_matrix(params[2]), b2 = to_matrix(params[3]);
  const Matrix xs = to_matrix(x), ys = to_matrix(y);
  const Forward f = forward(w1, b1, w2, b2, xs);
  const Matrix error = f.prediction - ys;
  float squared = 0;
  for (Eigen::Index i = 0; i < error.size(); ++i) squared += error.data()[i] * error.data()[i];
  const auto count = static_cast<float>(error.size());
  // d/dP mean((P - Y)^2) = 2 (P - Y) / count.
  const Matrix d_prediction = error * (2.0f / count);
  const Matrix d_hidden = d_prediction * w2.transpose();
  const Matrix d_pre =
      d_hidden.cwiseProduct((f.pre_activation.array() > 0.0f).cast<float>().matrix());
  const VaryingAxes varying = x.varying_axes() | y.varying_axes();
  return {Array::scalar(squared / count).with_varying_axes(varying),
          {to_array(xs.transpose() * d_pre, params[0].shape(), varying),
           to_array(column_sums(d_pre), params[1].shape(), varying),
           to_array(f.hidden.transpose() * d_prediction, params[2].shape(), varying),
           to_array(column_sums(d_prediction), params[3].shape(), varying)}};
}

namespace {

// Forward 2·B·(in·h + h·out) FLOPs, backward twice that; bytes: parameters, the shard and the
// activations once each. Activations (pre-activation, hidden, prediction) are held meanwhile.
void charge_train_step(Context& ctx, const Values& params, const Array& x) {
  const std::int64_t batch = x.dim(0), inputs = params[0].dim(0), hidden = params[0].dim(1);
  const std::int64_t outputs = params[2].dim(1);
  const std::int64_t weights = inputs * hidden + hidden * outputs;
  const std::int64_t activation_bytes = batch * (2 * hidden + outputs) * 4;
  std::int64_t param_bytes = 0;
  for (const Array& p : params) param_bytes += static_cast<std::int64_t>(p.size_bytes());
  ctx.hold_memory(activation_bytes, "MLP activations");
  ctx.charge_compute(6.0 * static_cast<double>(batch * weights),
                     param_bytes + static_cast<std::int64_t>(x.size_bytes()) + activation_bytes);
  ctx.release_memory(activation_bytes);
}

}  // namespace

DeviceFunction data_parallel_train_step(float learning_rate, std::string axis_name) {
  return [learning_rate, axis_name](Context& ctx, const Values& args) {
    const Values params(args.begin(), args.begin() + kMlpLeaves);
    charge_train_step(ctx, params, args[kMlpLeaves]);
    const LossAndGrads local = mlp_loss_and_grads(params, args[kMlpLeaves], args[kMlpLeaves + 1]);
    Values leaves = local.grads;
    leaves.push_back(local.loss);
    // jax.lax.pmean(grads, axis_name='devices') and pmean(loss, ...): one pmean per leaf.
    const Values averaged = ctx.pmean(leaves, axis_name);
    Values outputs;
    for (int i = 0; i < kMlpLeaves; ++i) {
      outputs.push_back(sub(params[i], scale(averaged[i], learning_rate)));
    }
    outputs.push_back(averaged[kMlpLeaves]);
    return outputs;
  };
}

TrainingRun train_data_parallel(Backend& backend, const MlpConfig& config,
                                const std::function<void()>& after_step) {
  SplitMix64 rng(config.seed);
  TrainingRun run;
  run.params = init_mlp_params(config, rng);
  const ShardedBatch batch = make_sharded_batch(config, rng);
  PmapOptions options;
  options.axis_name = config.axis_name;
  options.in_axes = {std::nullopt, std::nullopt, std::nullopt, std::nullopt, 0, 0};
  const auto train_step =
      pmap(data_parallel_train_step(config.learning_rate, config.axis_name), options);
  for (int step = 1; step <= config.steps; ++step) {
    Values args = run.params;
    args.push_back(batch.x);
    args.push_back(batch.y);
    const Values stacked = train_step(backend, args);  // every output has the device axis first
    bool identical = true;
    for (const Array& output : stacked) identical = identical && replicas_bit_identical(output);
    run.steps.push_back({step, take(stacked[kMlpLeaves], 0, 0).values<float>()[0], identical});
    for (int i = 0; i < kMlpLeaves; ++i) run.params[i] = take(stacked[i], 0, 0);
    if (after_step) after_step();
  }
  return run;
}

}  // namespace spmd
