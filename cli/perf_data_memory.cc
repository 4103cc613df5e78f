#include "cli/perf_data_memory.h"

#include <limits>

namespace spmd {
namespace {

std::int64_t saturating_product(std::int64_t a, std::int64_t b) {
  if (a != 0 && b > std::numeric_limits<std::int64_t>::max() / a) {
    return std::numeric_limits<std::int64_t>::max();
  }
  return a * b;
}

}  // namespace

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
  const std::int64_t buffer_count =
      buffers.in_all + saturating_product(buffers.per_device, devices);
  return saturating_product(buffer_count, bytes);
}

}  // namespace spmd
