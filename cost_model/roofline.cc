#include "cost_model/roofline.h"

#include <algorithm>
#include <cmath>

#include "cost_model/link_time.h"

namespace spmd::cost_model {

std::int64_t compute_time_ps(double flops, std::int64_t bytes_moved, double peak_flops_per_s,
                             std::int64_t memory_bandwidth_bytes_per_s) {
  const auto flops_ps = static_cast<std::int64_t>(std::ceil(flops / peak_flops_per_s * 1e12));
  // Moving bytes through memory is a transfer at the memory bandwidth, with no latency.
  const std::int64_t memory_ps = serialization_ps(bytes_moved, memory_bandwidth_bytes_per_s);
  return std::max(flops_ps, memory_ps);
}

}  // namespace spmd::cost_model
