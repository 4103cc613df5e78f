#include "cli/perf_data_memory.h"

#include "support/checked_math.h"

namespace spmd {

PerfDataBuffers perf_data_buffers(std::string_view op) {
  if (op == "all_reduce") return {.in_all = 1, .per_device = 0};
  if (op == "all_gather") return {.in_all = 4, .per_device = 0};
  if (op == "reduce_scatter") return {.in_all = 2, .per_device = 2};
  if (op == "all_to_all") return {.in_all = 2, .per_device = 4};
  if (op == "ppermute") return {.in_all = 0, .per_device = 1};
  return {};  // broadcast: timed without data
}

std::int64_t perf_data_bytes(std::string_view op, int devices, std::int64_t bytes) {
  const PerfDataBuffers buffers = perf_data_buffers(op);
  return saturating_multiply(
      saturating_add(buffers.in_all, saturating_multiply(buffers.per_device, devices)), bytes);
}

}  // namespace spmd
