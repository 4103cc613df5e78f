#pragma once
// Inside reference/: building chunk plans, shared by the orders in this folder.

#include <cstdint>
#include <vector>

#include "reference/reduction_order.h"

namespace spmd::reduction_orders {

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
inline std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return ceil_div(value, multiple) * multiple;
}

// Appends the chunk [begin, end) clipped to [0, count), unless it is empty.
void add_chunk(std::vector<ChunkFold>& plan, std::int64_t begin, std::int64_t end,
               std::int64_t count, const FoldTree& tree);
// One chunk of all `count` elements (none when count == 0).
std::vector<ChunkFold> single_chunk(std::int64_t count, const FoldTree& tree);
// Appends `second` (a plan over its own elements 0..) shifted to start at `offset`.
void append_shifted(std::vector<ChunkFold>& plan, std::vector<ChunkFold> second,
                    std::int64_t offset);

}  // namespace spmd::reduction_orders
