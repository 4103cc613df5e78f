#pragma once
// Local work on one device (a matmul, an optimizer step), as a roofline: the work takes the
// longer of its compute time at the peak rate and its memory time at the memory bandwidth,
// each rounded up to a whole picosecond.

#include <cstdint>

namespace spmd::cost_model {

std::int64_t compute_time_ps(double flops, std::int64_t bytes_moved, double peak_flops_per_s,
                             std::int64_t memory_bandwidth_bytes_per_s);

}  // namespace spmd::cost_model
