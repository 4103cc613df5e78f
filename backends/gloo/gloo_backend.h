#pragma once
// Gloo behind spmd::Backend (`spmdsim conform --backend gloo`): every collective of a program
// runs on real Gloo ranks, one thread each with a TCP device on loopback, through the library
// layer (backends/library_backend.h). The order names Gloo's all-reduce: gloo_ring (Gloo's
// default, the backend's native order), gloo_ring_chunked or gloo_bcube. psum_scatter is the
// reduce-scatter phase of that all-reduce (backends/reduce_scatter_placement.h): Gloo's own
// reduce-scatter has no known float order and races on 3 and 5 ranks (docs/backends.md).

#include <memory>

#include "reference/backend.h"
#include "reference/reduction_order.h"

namespace spmd {

// spmd::Error for an order Gloo has no all-reduce for, or with a ring (Gloo ranks are the
// group's ranks).
std::unique_ptr<Backend> make_gloo_backend(const ReductionOrder& order, int device_count);

// Registers `gloo` (native order gloo_ring) with the backend registry.
void register_gloo_backend();

}  // namespace spmd
