#include "reference/nccl_ring_loops.h"

#include <algorithm>

namespace spmd {
namespace {

// NCCL's chunks always hold at least one element (their bytes are a multiple of a 512-byte
// grain) and its types are at most 8 bytes; the clamps keep other inputs meaningful instead of
// dividing by zero or looping forever.
std::int64_t full_chunk_elements(std::int64_t element_bytes, std::int64_t chunk_bytes) {
  return std::max<std::int64_t>(1, chunk_bytes / element_bytes);
}

}  // namespace

ElementRange NcclRingLoop::chunk_range(std::int64_t count, int c) const {
  return {std::min(count, begin + c * chunk), std::min(count, begin + (c + 1) * chunk)};
}

std::int64_t nccl_ring_loop_count(std::int64_t count, int n, std::int64_t element_bytes,
                                  std::int64_t chunk_bytes) {
  const std::int64_t loop_count = n * full_chunk_elements(element_bytes, chunk_bytes);
  return count <= 0 ? 0 : (count + loop_count - 1) / loop_count;
}

NcclRingLoop nccl_ring_loop(std::int64_t count, int n, std::int64_t element_bytes,
                            std::int64_t chunk_bytes, std::int64_t index) {
  const std::int64_t full_chunk = full_chunk_elements(element_bytes, chunk_bytes);
  const std::int64_t loop_count = n * full_chunk;
  const std::int64_t align = std::max<std::int64_t>(1, 16 / element_bytes);
  const std::int64_t begin = index * loop_count;
  const std::int64_t remaining = count - begin;
  std::int64_t chunk = full_chunk;
  // all_reduce.h: "if (remCount < loopCount) chunkCount = alignUp(divUp(remCount, nranks),
  // 16/sizeof(T))".
  if (remaining < loop_count) chunk = ((remaining + n - 1) / n + align - 1) / align * align;
  return {begin, chunk};
}

std::vector<std::vector<ElementRange>> nccl_ring_loops(std::int64_t count, int n,
                                                       std::int64_t element_bytes,
                                                       std::int64_t chunk_bytes) {
  std::vector<std::vector<ElementRange>> loops;
  const std::int64_t loop_total = nccl_ring_loop_count(count, n, element_bytes, chunk_bytes);
  for (std::int64_t index = 0; index < loop_total; ++index) {
    const NcclRingLoop loop = nccl_ring_loop(count, n, element_bytes, chunk_bytes, index);
    std::vector<ElementRange> chunks;
    for (int c = 0; c < n; ++c) chunks.push_back(loop.chunk_range(count, c));
    loops.push_back(std::move(chunks));
  }
  return loops;
}

}  // namespace spmd
