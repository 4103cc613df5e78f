#include "reference/reduction_orders/chunk_plans.h"

#include <algorithm>
#include <utility>

namespace spmd::reduction_orders {

void add_chunk(std::vector<ChunkFold>& plan, std::int64_t begin, std::int64_t end,
               std::int64_t count, const FoldTree& tree) {
  begin = std::min(begin, count);
  end = std::min(end, count);
  if (begin < end) plan.push_back(ChunkFold{begin, end, tree});
}

std::vector<ChunkFold> single_chunk(std::int64_t count, const FoldTree& tree) {
  std::vector<ChunkFold> plan;
  add_chunk(plan, 0, count, count, tree);
  return plan;
}

void append_shifted(std::vector<ChunkFold>& plan, std::vector<ChunkFold> second,
                    std::int64_t offset) {
  for (ChunkFold& chunk : second) {
    chunk.begin += offset;
    chunk.end += offset;
    plan.push_back(std::move(chunk));
  }
}

}  // namespace spmd::reduction_orders
