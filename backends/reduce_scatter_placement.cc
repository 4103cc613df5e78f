#include "backends/reduce_scatter_placement.h"

#include <algorithm>

namespace spmd {
namespace {

// The one fold of every chunk that overlaps [begin, end), or nothing when two differ.
std::optional<FoldTree> single_fold(const std::vector<ChunkFold>& plan, std::int64_t begin,
                                    std::int64_t end) {
  std::optional<FoldTree> fold;
  for (const ChunkFold& chunk : plan) {
    if (chunk.end <= begin || chunk.begin >= end) continue;
    if (fold && !(*fold == chunk.tree)) return std::nullopt;
    fold = chunk.tree;
  }
  return fold;
}

// Blocks at multiples of `stride`: the placement, if each rank's fold is found at one of them.
std::optional<ReduceScatterPlacement> placement_with_stride(const ReductionOrder& order, int n,
                                                            std::int64_t block_elements,
                                                            std::int64_t stride, DType dtype) {
  const std::vector<ChunkFold> plan = order.all_reduce_plan(n, stride * n, dtype);
  std::vector<std::optional<FoldTree>> slot_folds;
  for (int slot = 0; slot < n; ++slot) {
    slot_folds.push_back(single_fold(plan, slot * stride, slot * stride + block_elements));
  }
  ReduceScatterPlacement placement{.buffer_elements = stride * n, .block_offsets = {}};
  std::vector<bool> taken(static_cast<std::size_t>(n), false);
  for (int rank = 0; rank < n; ++rank) {
    const FoldTree wanted = order.reduce_scatter_fold(n, rank);
    int found = -1;
    for (int slot = 0; slot < n && found < 0; ++slot) {
      const auto s = static_cast<std::size_t>(slot);
      if (!taken[s] && slot_folds[s] && *slot_folds[s] == wanted) found = slot;
    }
    if (found < 0) return std::nullopt;
    taken[static_cast<std::size_t>(found)] = true;
    placement.block_offsets.push_back(found * stride);
  }
  return placement;
}

// Ring chunks line up after a little padding (Gloo pads segments to whole elements and an even
// count per rank, at most a few elements per segment); an order whose folds never line up is
// given up on after this many.
constexpr std::int64_t kMostPaddingElements = 4096;

}  // namespace

std::optional<ReduceScatterPlacement> reduce_scatter_placement(const ReductionOrder& order,
                                                               int group_size,
                                                               std::int64_t block_elements,
                                                               DType dtype) {
  const std::int64_t widest = block_elements + kMostPaddingElements;
  for (std::int64_t stride = std::max<std::int64_t>(block_elements, 1); stride <= widest;
       ++stride) {
    if (auto placement =
            placement_with_stride(order, group_size, block_elements, stride, dtype)) {
      return placement;
    }
  }
  return std::nullopt;
}

}  // namespace spmd
