#include "reference/nccl_ring_loops.h"

#include <algorithm>

namespace spmd {

std::vector<std::vector<ElementRange>> nccl_ring_loops(std::int64_t count, int n,
                                                       std::int64_t element_bytes,
                                                       std::int64_t chunk_bytes) {
  // NCCL's chunks always hold at least one element (their bytes are a multiple of a 512-byte
  // grain) and its types are at most 8 bytes; the clamps keep other inputs meaningful instead of
  // dividing by zero or looping forever.
  const std::int64_t full_chunk = std::max<std::int64_t>(1, chunk_bytes / element_bytes);
  const std::int64_t loop_count = n * full_chunk;
  const std::int64_t align = std::max<std::int64_t>(1, 16 / element_bytes);
  std::vector<std::vector<ElementRange>> loops;
  for (std::int64_t loop_begin = 0; loop_begin < count; loop_begin += loop_count) {
    const std::int64_t remaining = count - loop_begin;
    std::int64_t chunk = full_chunk;
    // all_reduce.h: "if (remCount < loopCount) chunkCount = alignUp(divUp(remCount, nranks),
    // 16/sizeof(T))".
    if (remaining < loop_count) chunk = ((remaining + n - 1) / n + align - 1) / align * align;
    std::vector<ElementRange> chunks;
    for (int c = 0; c < n; ++c) {
      const std::int64_t begin = std::min(count, loop_begin + c * chunk);
      const std::int64_t end = std::min(count, loop_begin + (c + 1) * chunk);
      chunks.emplace_back(begin, end);
    }
    loops.push_back(std::move(chunks));
  }
  return loops;
}

}  // namespace spmd
