#pragma once
// NCCL behind spmd::Backend (`spmdsim conform --backend nccl`): device d is GPU d, one NCCL rank
// per GPU, and every collective of a program runs on NCCL through the library layer
// (backends/library_backend.h), on communicators made for each group of devices. NCCL is pinned
// to its Ring algorithm, Simple protocol and one channel (nccl_environment.h), so its order is
// nccl_ring along the ring NCCL reports (pass it with --ring; docs/gpu-backends.md).

#include <memory>

#include "reference/backend.h"
#include "reference/reduction_order.h"

namespace spmd {

// spmd::Error for another order than nccl_ring, or more devices than this machine has GPUs.
std::unique_ptr<Backend> make_nccl_backend(const ReductionOrder& order, int device_count);

// Registers `nccl` (native order nccl_ring) with the backend registry.
void register_nccl_backend();

}  // namespace spmd
