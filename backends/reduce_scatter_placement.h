#pragma once
// Reduce-scatter as the reduce-scatter phase of a library's all-reduce. Gloo has no
// reduce-scatter with a known float order, and Open MPI's differ from its all-reduce; but a
// ring all-reduce reduces each chunk of its buffer in a fixed fold, and the reference's
// reduce-scatter folds for those orders are exactly those chunk folds (the chunk whose fold ends
// at rank d, docs/reduction-orders.md#reduce-scatter). So a backend places each rank's block,
// padded, in the chunk that folds as that rank's block should, runs the real all-reduce, and
// each rank keeps its own block.

#include <cstdint>
#include <optional>
#include <vector>

#include "reference/dtype.h"
#include "reference/reduction_order.h"

namespace spmd {

struct ReduceScatterPlacement {
  std::int64_t buffer_elements = 0;  // the all-reduce's element count
  // block_offsets[d]: where rank d's block starts in the all-reduce buffer; the elements of the
  // buffer outside every block are padding (zeros, reduced and discarded).
  std::vector<std::int64_t> block_offsets;
};

// A placement of `group_size` blocks of `block_elements` under which `order`'s all-reduce folds
// block d as order.reduce_scatter_fold(group_size, d), found by padding the blocks to the
// smallest stride whose chunks line up; nothing when no stride up to 4096 elements wider
// than the block does. `order` is one group's order (ring in group ranks).
std::optional<ReduceScatterPlacement> reduce_scatter_placement(const ReductionOrder& order,
                                                               int group_size,
                                                               std::int64_t block_elements,
                                                               DType dtype);

}  // namespace spmd
