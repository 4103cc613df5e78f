#pragma once
// Collectives between TPU chips over their ICI torus, in closed form (docs/training-model.md,
// "TPUs"): a group of chips `stride` apart fills the torus axes one after another (the mesh's
// innermost axis first, as XLA lays a mesh onto a slice), and on each axis it spans it runs a
// bidirectional ring; the axes carry their shares at once. All-gather and reduce-scatter move
// (n - 1) / n of the buffer over those rings, an all-reduce twice that, an all-to-all the same
// as an all-gather, a permute one buffer over one link; each hop adds the link's latency.

#include "cost_model/collective_timing.h"
#include "training/accelerator.h"

namespace spmd::training {

// Seconds for `op` of `bytes` (nccl-tests' size, as cost_model::TimingRequest) over `ranks`
// chips `stride` apart.
double ici_collective_seconds(const Accelerator& tpu, cost_model::TimedOp op, double bytes,
                              int ranks, int stride);

}  // namespace spmd::training
