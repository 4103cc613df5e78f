#include "workloads/transformer_step.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "workloads/transformer_flops.h"
#include "workloads/transformer_memory.h"

namespace spmd {
namespace {

// Streams of the started collectives: each runs its collectives in order, as one NCCL
// communicator's CUDA stream does; different streams run side by side.
constexpr int kGradientStream = 0;  // data-parallel gradient reductions (DDP's buckets)
constexpr int kGatherStream = 1;    // FSDP weight all-gathers
constexpr int kScatterStream = 2;   // FSDP gradient reduce-scatters
constexpr int kPipelineStream = 3;  // stage-to-stage sends

CollectiveCall call_over(CollectiveOp op, const char* axis) {
  CollectiveCall call;
  call.op = op;
  call.axes = AxisNames(axis);
  call.tiled = true;
  return call;
}

// `elements` rounded down to a multiple of `parts` (at least `parts`), for collectives that
// split their input.
std::int64_t divisible(std::int64_t elements, int parts) {
  return std::max<std::int64_t>(parts, elements / parts * parts);
}

// What one device computes and moves per micro-batch, worked out once.
struct DeviceWork {
  // Matmul FLOPs of one layer's forward on this device, by block, and of the logits.
  double attention_flops = 0;
  double attention_core_flops = 0;  // part of attention_flops; recomputed by selective
  double mlp_flops = 0;
  double logits_flops = 0;
  // Bytes the element-wise work (norms, activation function, dropout, residuals) reads and
  // writes in one layer's forward: twice the layer's activations without the attention scores
  // (softmax and dropout are taken as fused into the attention core, as flash attention does).
  std::int64_t elementwise_bytes = 0;
  std::int64_t attention_weight_bytes = 0;
  std::int64_t mlp_weight_bytes = 0;
  std::int64_t logits_weight_bytes = 0;
  std::int64_t layer_weights = 0;    // elements of one layer's weights on a tensor rank
  std::int64_t table_weights = 0;    // elements of the embedding (or output) table, likewise
  std::int64_t stage_weights = 0;    // elements this device updates
  std::int64_t optimizer_bytes = 0;  // the update's traffic
};

DeviceWork device_work(const TransformerSpec& s) {
  const double split = static_cast<double>(s.tensor) * s.context;
  const LayerFlops layer = layer_forward_flops(s, s.micro_batch_size);
  const std::int64_t e = static_cast<std::int64_t>(dtype_size_bytes(s.dtype));
  DeviceWork w;
  w.attention_flops = layer.attention_block() / split;
  w.attention_core_flops = layer.attention_core / split;
  w.mlp_flops = layer.mlp / split;
  w.logits_flops = logits_forward_flops(s, s.micro_batch_size) / split;
  TransformerSpec unscored = s;
  unscored.recompute = Recompute::selective;  // the activations without the s² terms
  w.elementwise_bytes = static_cast<std::int64_t>(2.0 * layer_activation_bytes(unscored));
  const std::int64_t h = s.d_model;
  w.attention_weight_bytes = (h * (h + 2 * s.kv_width()) + h * h) / s.tensor * e;
  w.mlp_weight_bytes = (s.gated_mlp ? 3 : 2) * h * s.d_ff / s.tensor * e;
  w.logits_weight_bytes = embedding_parameters(s) / s.tensor * e;
  w.layer_weights = layer_parameters(s) / s.tensor;
  w.table_weights = embedding_parameters(s) / s.tensor;
  w.stage_weights = (s.layers_per_stage() * w.layer_weights + w.table_weights) / s.fsdp /
                    (s.distributed_optimizer ? s.data : 1);
  const bool mixed = s.dtype != DType::float32;
  const std::int64_t state = static_cast<std::int64_t>(dtype_size_bytes(s.optimizer_state_dtype));
  const std::int64_t master = mixed ? 4 : 0;
  const std::int64_t moments = s.optimizer == Optimizer::adam ? 2 * state : 0;
  // Read the gradient, read and write the master weights and moments, write the weights.
  w.optimizer_bytes = w.stage_weights * (e + 2 * (master + moments) + e);
  return w;
}

class TransformerStep {
 public:
  TransformerStep(Context& ctx, const TransformerSpec& spec)
      : ctx_(ctx),
        s_(spec),
        work_(device_work(spec)),
        // From the mesh the step runs on: the full one, or one of representatives
        // (workloads/symmetric_step.h), whose devices are the stages.
        stage_(ctx.device() / (ctx.mesh().device_count() / spec.pipeline)),
        tokens_(spec.micro_batch_tokens()) {}

  void run() {
    hold_memory();
    const std::int64_t ticks = pipeline_ticks(s_);
    const std::int64_t m = s_.micro_batches(), p = s_.pipeline;
    for (std::int64_t tick = 0; tick < ticks; ++tick) {
      const std::int64_t forward_mb = tick - stage_;
      const std::int64_t backward_mb = tick - 2 * (p - 1) + stage_;
      forward_part(forward_mb >= 0 && forward_mb < m);
      std::optional<PendingCollective> send_forward = pipeline_send(true);
      backward_part(backward_mb >= 0 && backward_mb < m, tick == ticks - 1);
      std::optional<PendingCollective> send_backward = pipeline_send(false);
      if (send_forward) send_forward->wait();
      if (send_backward) send_backward->wait();
    }
    optimizer_update();
    ctx_.release_memory(held_bytes_);
  }

 private:
  // ---- Memory: the stage's parts for the whole step (transformer_memory.h).
  void hold_memory() {
    const TransformerMemory memory = stage_memory(s_, stage_);
    const auto hold = [&](double bytes, const std::string& what) {
      const auto whole = static_cast<std::int64_t>(bytes);
      ctx_.hold_memory(whole, what);
      held_bytes_ += whole;
    };
    hold(memory.weights, "transformer weights");
    hold(memory.gradients, "transformer gradients");
    hold(memory.optimizer_states, "transformer optimizer states");
    hold(memory.gathered_weights, "transformer FSDP gathered weights");
    hold(memory.activations, "transformer activations");
  }

  // ---- Compute, through the roofline: matmuls at matmul_efficiency of peak.
  void matmul(double flops, std::int64_t weight_bytes, bool real) {
    if (real) ctx_.charge_compute(flops / s_.matmul_efficiency, weight_bytes);
  }
  void elementwise(std::int64_t bytes, bool real) {
    if (real) ctx_.charge_compute(0.0, bytes);
  }

  // ---- Collectives
  Shape activation_shape() const { return {tokens_, s_.d_model}; }
  Shape sequence_shard_shape() const { return {tokens_ / s_.tensor, s_.d_model}; }

  void blocking(const CollectiveCall& call, const Shape& shape) {
    ctx_.collective_cost(call, s_.dtype, shape);
  }
  PendingCollective started(const CollectiveCall& call, const Shape& shape, int stream) {
    return ctx_.collective_cost_start(call, s_.dtype, shape, {.stream = stream});
  }

  // A tensor-parallel block's entry and exit (Megatron's f and g): with sequence parallelism an
  // all-gather of the sequence shards before and a reduce-scatter after; without, an
  // all-reduce after. The backward pass mirrors them with the same collectives.
  void tensor_enter() {
    if (s_.tensor > 1 && s_.sequence_parallel) {
      blocking(call_over(CollectiveOp::all_gather, "tensor"), sequence_shard_shape());
    }
  }
  void tensor_exit() {
    if (s_.tensor == 1) return;
    if (s_.sequence_parallel) {
      blocking(call_over(CollectiveOp::psum_scatter, "tensor"), activation_shape());
    } else {
      blocking(call_over(CollectiveOp::psum, "tensor"), activation_shape());
    }
  }
  // Context parallelism: every query shard needs the whole sequence's keys and values.
  Shape kv_shape() const { return {tokens_, 2 * s_.kv_width() / s_.tensor}; }
  void context_gather_kv() {
    if (s_.context > 1) blocking(call_over(CollectiveOp::all_gather, "context"), kv_shape());
  }
  void context_scatter_kv_gradients() {
    if (s_.context > 1) {
      const Shape whole{tokens_ * s_.context, 2 * s_.kv_width() / s_.tensor};
      blocking(call_over(CollectiveOp::psum_scatter, "context"), whole);
    }
  }

  // FSDP: one layer's weights gathered from their shards.
  std::optional<PendingCollective> start_gather() {
    if (s_.fsdp == 1) return std::nullopt;
    const Shape shard{divisible(work_.layer_weights, s_.fsdp) / s_.fsdp};
    return started(call_over(CollectiveOp::all_gather, "fsdp"), shard, kGatherStream);
  }
  void finish(std::optional<PendingCollective>& pending) {
    if (pending) pending->wait();
    pending.reset();
  }

  // Runs `body(layer)` for the stage's layers in `order`, each after its FSDP gather, the next
  // layer's gather started first (prefetch; without overlap each gather is waited at once).
  template <class Body>
  void over_layers(bool reverse, Body body) {
    const std::int64_t n = s_.layers_per_stage();
    std::optional<PendingCollective> next = start_gather();
    if (!s_.overlap) finish(next);
    for (std::int64_t i = 0; i < n; ++i) {
      std::optional<PendingCollective> current = std::move(next);
      next.reset();
      if (i + 1 < n) {
        next = start_gather();
        if (!s_.overlap) finish(next);
      }
      finish(current);
      body(reverse ? n - 1 - i : i);
    }
  }

  // ---- One layer
  void layer_forward(bool real) {
    tensor_enter();
    context_gather_kv();
    matmul(work_.attention_flops, work_.attention_weight_bytes, real);
    tensor_exit();
    tensor_enter();
    matmul(work_.mlp_flops, work_.mlp_weight_bytes, real);
    tensor_exit();
    elementwise(work_.elementwise_bytes, real);
  }

  void layer_backward(bool real) {
    if (s_.recompute == Recompute::full) layer_forward(real);
    tensor_enter();
    matmul(2.0 * work_.mlp_flops, work_.mlp_weight_bytes, real);
    tensor_exit();
    tensor_enter();
    const double recomputed =
        s_.recompute == Recompute::selective ? work_.attention_core_flops : 0.0;
    matmul(2.0 * work_.attention_flops + recomputed, work_.attention_weight_bytes, real);
    context_scatter_kv_gradients();
    tensor_exit();
    elementwise(2 * work_.elementwise_bytes, real);
  }

  // ---- A tick's forward: embedding (first stage), layers, logits (last stage).
  void forward_part(bool real) {
    const bool first = stage_ == 0, last = stage_ == s_.pipeline - 1;
    // The vocabulary-parallel embedding's lookup is combined over `tensor` (Megatron).
    elementwise(tokens_ * s_.d_model * static_cast<std::int64_t>(dtype_size_bytes(s_.dtype)),
                real && first);
    tensor_exit();
    over_layers(false, [&](std::int64_t) { layer_forward(real); });
    tensor_enter();
    matmul(work_.logits_flops, work_.logits_weight_bytes, real && last);
  }

  // ---- A tick's backward: logits (last stage), layers in reverse, each layer's gradients
  // reduce-scattered over `fsdp`; in the step's last tick, each layer's data-parallel gradient
  // reduction starts as soon as its backward is done.
  void backward_part(bool real, bool last_tick) {
    const bool last = stage_ == s_.pipeline - 1;
    matmul(2.0 * work_.logits_flops, work_.logits_weight_bytes, real && last);
    tensor_exit();  // the logits' input gradient, combined over `tensor`
    std::vector<PendingCollective> scatters;
    over_layers(true, [&](std::int64_t) {
      layer_backward(real);
      if (s_.fsdp > 1) {
        const Shape gradient{divisible(work_.layer_weights, s_.fsdp)};
        scatters.push_back(
            started(call_over(CollectiveOp::psum_scatter, "fsdp"), gradient, kScatterStream));
        if (!s_.overlap) {
          scatters.back().wait();
          scatters.pop_back();
        }
      }
      if (last_tick && s_.overlap) start_data_reduction(work_.layer_weights);
    });
    for (PendingCollective& scatter : scatters) scatter.wait();
    if (!last_tick) return;
    if (!s_.overlap) {  // the blocking reductions after the whole backward pass
      for (std::int64_t i = 0; i < s_.layers_per_stage(); ++i) {
        start_data_reduction(work_.layer_weights);
      }
    }
    start_data_reduction(work_.table_weights);
    for (PendingCollective& reduction : reductions_) reduction.wait();
    reductions_.clear();
  }

  // The gradients of `weights` elements (this device's FSDP shard of them) over `data`:
  // all-reduced, or reduce-scattered for the distributed optimizer.
  void start_data_reduction(std::int64_t weights) {
    if (s_.data == 1) return;
    const std::int64_t shard = std::max<std::int64_t>(1, weights / s_.fsdp);
    if (s_.distributed_optimizer) {
      reductions_.push_back(started(call_over(CollectiveOp::psum_scatter, "data"),
                                    {divisible(shard, s_.data)}, kGradientStream));
    } else {
      reductions_.push_back(started(call_over(CollectiveOp::psum, "data"), {shard},
                                    kGradientStream));
    }
    if (!s_.overlap) {
      reductions_.back().wait();
      reductions_.pop_back();
    }
  }

  // The update: memory-bound over this device's share of the weights; with the distributed
  // optimizer, the updated weights are then all-gathered over `data`, layer by layer.
  void optimizer_update() {
    ctx_.charge_compute(0.0, work_.optimizer_bytes);
    if (!s_.distributed_optimizer || s_.data == 1) return;
    const auto gather = [&](std::int64_t weights) {
      const std::int64_t shard = divisible(std::max<std::int64_t>(1, weights / s_.fsdp), s_.data);
      blocking(call_over(CollectiveOp::all_gather, "data"), {shard / s_.data});
    };
    for (std::int64_t i = 0; i < s_.layers_per_stage(); ++i) gather(work_.layer_weights);
    gather(work_.table_weights);
  }

  // Activations to the next stage (forward) or their gradients to the previous one, on the
  // pipeline stream, waited at the end of the tick. Each tensor rank sends its sequence shard
  // (with sequence parallelism that is what it holds; without, Megatron's scatter/gather
  // optimization sends 1/t and gathers over NVLink).
  std::optional<PendingCollective> pipeline_send(bool forward) {
    if (s_.pipeline == 1) return std::nullopt;
    CollectiveCall call = call_over(CollectiveOp::ppermute, "pipeline");
    for (int stage = 0; stage + 1 < s_.pipeline; ++stage) {
      call.perm.emplace_back(forward ? stage : stage + 1, forward ? stage + 1 : stage);
    }
    const Shape shard{std::max<std::int64_t>(1, tokens_ / s_.tensor), s_.d_model};
    return started(call, shard, kPipelineStream);
  }

  Context& ctx_;
  const TransformerSpec& s_;
  DeviceWork work_;
  int stage_;
  std::int64_t tokens_;
  std::int64_t held_bytes_ = 0;
  std::vector<PendingCollective> reductions_;
};

}  // namespace

Mesh transformer_mesh(const TransformerSpec& s) {
  return Mesh({s.pipeline, s.data, s.fsdp, s.context, s.tensor},
              {"pipeline", "data", "fsdp", "context", "tensor"});
}

std::int64_t pipeline_ticks(const TransformerSpec& s) {
  return s.micro_batches() + 2 * (std::int64_t{s.pipeline} - 1);
}

double pipeline_bubble_fraction(const TransformerSpec& s) {
  const double p = s.pipeline, m = static_cast<double>(s.micro_batches());
  return (p - 1.0) / (m + p - 1.0);
}

std::int64_t transformer_collectives_per_step(const TransformerSpec& s) {
  const double tensor_per_block = s.tensor == 1 ? 0 : (s.sequence_parallel ? 2 : 1);
  const double context = s.context > 1 ? 1 : 0;
  const double fsdp = s.fsdp > 1 ? 1 : 0;
  const double forward_layer = 2 * tensor_per_block + context;
  const double backward_layer =
      2 * tensor_per_block + context + (s.recompute == Recompute::full ? forward_layer : 0);
  const double embedding_and_logits =
      (s.tensor == 1 ? 0 : 2) + (s.tensor > 1 && s.sequence_parallel ? 1 : 0);
  const double layers = static_cast<double>(s.layers_per_stage());
  const double per_tick = layers * (forward_layer + backward_layer + 3 * fsdp) +
                          embedding_and_logits + (s.pipeline > 1 ? 2 : 0);
  const double data_reductions =
      s.data > 1 ? (layers + 1) * (s.distributed_optimizer ? 2 : 1) : 0;
  // In doubles: counts beyond 2^62 (never run: the per-run limit refuses them) stay ordered.
  const double count = static_cast<double>(pipeline_ticks(s)) * per_tick + data_reductions;
  return static_cast<std::int64_t>(std::min(count, 0x1p62));
}

DeviceFunction transformer_training_step(const TransformerSpec& spec) {
  return [&spec](Context& ctx, const Values&) {
    TransformerStep(ctx, spec).run();
    return Values{};
  };
}

}  // namespace spmd
