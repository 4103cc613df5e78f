#include "cost_model/roofline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cost_model/link_time.h"
#include "support/checked_math.h"

namespace spmd::cost_model {

std::int64_t compute_time_ps(double flops, std::int64_t bytes_moved, double peak_flops_per_s,
                             std::int64_t memory_bandwidth_bytes_per_s) {
  // Checked: a cast of a time beyond int64 (1e300 FLOPs, or 1 FLOP/s) is undefined, and used to
  // give the same step time for 1 FLOP/s as for 100 TFLOP/s.
  const std::int64_t flops_ps = checked_ceil_to_int64(
      flops / peak_flops_per_s * 1e12, [&] {
        return fmt::format("compute time in ps of {} FLOPs at {} FLOP/s", flops, peak_flops_per_s);
      });
  // Moving bytes through memory is a transfer at the memory bandwidth, with no latency.
  const std::int64_t memory_ps = serialization_ps(bytes_moved, memory_bandwidth_bytes_per_s);
  return std::max(flops_ps, memory_ps);
}

}  // namespace spmd::cost_model
