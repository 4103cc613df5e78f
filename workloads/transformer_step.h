#pragma once
// One training step of the `transformer` workload on the simulator, without data
// (docs/workload-format.md, "transformer", "The step"). The mesh is (pipeline, data, fsdp,
// context, tensor), row-major, so that tensor parallelism is innermost (inside a node on a
// node-major machine, as Megatron orders its groups) and pipeline outermost.
//
// The step is a 1F1B pipeline written as an SPMD program, as JAX pipelines are: m + 2(p - 1)
// ticks; in tick k, stage s runs the forward of micro-batch k - s and the backward of
// micro-batch k - 2(p - 1) + s where they exist, then the stages pass activations forward and
// gradients back (ppermute over `pipeline`). Every device issues the same collectives in the
// same order; a stage with no micro-batch in a tick issues its tensor-parallel collectives
// without compute (its groups are its own, so it delays no one). The step takes
// (m + p - 1)·(t_forward + t_backward) plus communication, the 1F1B time, with its bubble
// (p - 1)/(m + p - 1).
//
// Per layer: tensor-parallel all-reduces after attention and after the MLP, forward and
// backward (with sequence_parallel an all-gather before and a reduce-scatter after each block
// instead); context parallelism all-gathers K and V before attention and reduce-scatters their
// gradients; FSDP all-gathers each layer's weights before its forward and its backward (the
// next layer's prefetched while one computes) and reduce-scatters its gradients after its
// backward. Data-parallel gradient reductions (all-reduce, or reduce-scatter with
// distributed_optimizer and an all-gather of the weights after the update) start layer by layer
// during the last micro-batch's backward, as Megatron's overlapped gradient reduction.

#include <cstdint>

#include "reference/context.h"
#include "reference/mesh.h"
#include "workloads/transformer_spec.h"

namespace spmd {

Mesh transformer_mesh(const TransformerSpec& spec);

// The pipeline's ticks: m + 2(p - 1).
std::int64_t pipeline_ticks(const TransformerSpec& spec);
// (p - 1) / (m + p - 1): the share of a 1F1B step each stage idles.
double pipeline_bubble_fraction(const TransformerSpec& spec);

// The collectives every device issues in one step (for the per-run limit).
std::int64_t transformer_collectives_per_step(const TransformerSpec& spec);

// The per-device program of one step; `spec` must outlive it.
DeviceFunction transformer_training_step(const TransformerSpec& spec);

}  // namespace spmd
