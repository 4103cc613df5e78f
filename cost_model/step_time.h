#pragma once
// Steps on uniform links (every pair of ranks one link of the same latency and bandwidth), what
// the algorithms' closed forms (collectives/<algorithm>.cc) are written with. A step's transfers
// leave together and the step ends at its last arrival, so a step takes the time of its largest
// message.

#include <cstdint>
#include <vector>

#include "cost_model/link_time.h"

namespace spmd::cost_model {

// One step: latency plus the largest message's serialization (0 if the step moves nothing).
inline std::int64_t step_time_ps(std::int64_t largest_bytes, std::int64_t latency_ps,
                                 std::int64_t bandwidth_bytes_per_s) {
  return largest_bytes > 0 ? transfer_time_ps(largest_bytes, latency_ps, bandwidth_bytes_per_s) : 0;
}

// Steps one after another, each given by its largest message in bytes.
std::int64_t steps_time_ps(const std::vector<std::int64_t>& largest_bytes_per_step,
                           std::int64_t latency_ps, std::int64_t bandwidth_bytes_per_s);

}  // namespace spmd::cost_model
