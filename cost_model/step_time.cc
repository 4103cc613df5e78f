#include "cost_model/step_time.h"

#include "support/checked_math.h"

namespace spmd::cost_model {

std::int64_t steps_time_ps(const std::vector<std::int64_t>& largest_bytes_per_step,
                           std::int64_t latency_ps, std::int64_t bandwidth_bytes_per_s) {
  std::int64_t total = 0;
  for (std::int64_t bytes : largest_bytes_per_step) {
    total = checked_add(total, step_time_ps(bytes, latency_ps, bandwidth_bytes_per_s),
                        "closed-form time in ps of a collective's steps");
  }
  return total;
}

}  // namespace spmd::cost_model
