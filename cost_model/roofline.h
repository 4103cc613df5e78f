#pragma once
// Local work on one device (a matmul, an optimizer step), as a roofline: the work takes the
// longer of its compute time at the peak rate and its memory time at the memory bandwidth,
// each rounded up to a whole picosecond.

#include <cstdint>

namespace spmd::cost_model {

// Defaults for programs charged by FLOPs and bytes (imported HLO, the transformer workload), in
// one place: the fraction of the peak FLOP/s that large matmuls reach, and of the memory
// bandwidth that streaming ops reach. Both are round assumptions, not measurements: GEMMs and
// streaming kernels run below datasheet peaks by amounts that depend on shape and library. With
// 0.7, the transformer workload predicts the eight Megatron runs of Korthikanti et al. 2022
// within 17% (docs/validation.md, "Training steps against published runs"); nothing was fitted.
inline constexpr double kDefaultMatmulEfficiency = 0.7;
inline constexpr double kDefaultMemoryEfficiency = 0.8;

std::int64_t compute_time_ps(double flops, std::int64_t bytes_moved, double peak_flops_per_s,
                             std::int64_t memory_bandwidth_bytes_per_s);

}  // namespace spmd::cost_model
