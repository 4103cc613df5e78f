// Gloo's all-reduces: ring (gloo/allreduce.cc ring()), ring-chunked (AllreduceRingChunked) and
// bcube (gloo/allreduce.cc bcube(), base 2). Verified bitwise against Gloo; see
// docs/reduction-orders.md. Their reduce-scatter folds are a model: the block owned by d is the
// chunk whose fold ends at d, read off the all-reduce's reduce-scatter phase (Gloo's own
// reduce-scatter collective is not pinned).

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "reference/error.h"
#include "reference/reduction_orders/chunk_plans.h"
#include "reference/reduction_orders/order_parts.h"

namespace spmd::reduction_orders {
namespace {

// ---- Ring. Data flows toward rank - 1.

// Chunk c starts at rank c-1 and goes down the ranks: acc = x[c-1]; acc = x[c-2] + acc; ...;
// rank c adds last and holds the final value.
FoldTree ring_chunk_fold(int group_size, std::int64_t chunk) {
  return fold_new_plus_acc(rank_order(group_size).walk(chunk - 1, -1));
}

std::vector<ChunkFold> ring_plan(const ReductionOrder& order, const RingOrder& ring,
                                 std::int64_t count, std::int64_t element_bytes) {
  const int n = ring.size();
  const std::int64_t total_bytes = count * element_bytes;
  // gloo/allreduce.cc rounds maxSegmentSize down to whole elements (at least one); this equals
  // Gloo's maxSegBytes whenever that is a multiple of the element size (1 MiB is).
  const std::int64_t max_bytes =
      element_bytes * std::max<std::int64_t>(1, order.gloo_max_segment_bytes / element_bytes);
  // At least two segments per rank, and the same number on every rank.
  const std::int64_t num_segments =
      round_up(std::max<std::int64_t>(ceil_div(total_bytes, max_bytes), 2 * n), n);
  const std::int64_t segments_per_rank = num_segments / n;
  const std::int64_t segment_bytes = round_up(ceil_div(total_bytes, num_segments), element_bytes);
  const std::int64_t chunk_elements = segments_per_rank * segment_bytes / element_bytes;

  std::vector<ChunkFold> plan;
  for (int c = 0; c < n; ++c) {
    add_chunk(plan, c * chunk_elements, (c + 1) * chunk_elements, count, ring_chunk_fold(n, c));
  }
  return plan;
}

FoldTree ring_reduce_scatter_fold(const ReductionOrder&, const RingOrder& ring, int destination) {
  return ring_chunk_fold(ring.size(), destination);
}

// ---- Ring-chunked. Data flows toward rank + 1.

// Chunk pair j (chunks 2j and 2j+1): acc = x_j; acc = x_{j+1} + acc; ...; rank j-1 adds last.
FoldTree ring_chunked_pair_fold(int group_size, std::int64_t pair) {
  return fold_new_plus_acc(rank_order(group_size).walk(pair, +1));
}

std::vector<ChunkFold> ring_chunked_plan(const ReductionOrder&, const RingOrder& ring,
                                         std::int64_t count, std::int64_t) {
  const int n = ring.size();
  const int chunks = 2 * n;
  const std::int64_t chunk_size = std::max<std::int64_t>(256, ceil_div(count, chunks));
  std::vector<ChunkFold> plan;
  for (int k = 0; k < chunks; ++k) {
    add_chunk(plan, k * chunk_size, (k + 1) * chunk_size, count, ring_chunked_pair_fold(n, k / 2));
  }
  return plan;
}

FoldTree ring_chunked_reduce_scatter_fold(const ReductionOrder&, const RingOrder& ring,
                                          int destination) {
  return ring_chunked_pair_fold(ring.size(), destination + 1);
}

// ---- Bcube, base 2. Modelled only for powers of two (the balanced butterfly) and for n = 3
// (one step over a group of three). Other sizes factor into steps of 2 and a remainder
// (6 -> [2,3], 12 -> [2,2,3]); their order is unverified here and they are rejected.

void check_bcube_modelled(int n) {
  if (!std::has_single_bit(static_cast<unsigned>(n)) && n != 3) {
    throw Error(fmt::format(
        "gloo_bcube order for group size {} is not modelled, expected a power of two or 3", n));
  }
}

// n = 3: the owner g of chunk g adds the others' partials in ascending rank order.
FoldTree bcube3_chunk_fold(int owner) {
  FoldTree tree;
  int acc = tree.add_leaf(owner);
  for (int other = 0; other < 3; ++other) {
    if (other == owner) continue;
    const int x = tree.add_leaf(other);
    acc = tree.add_op(acc, x);
  }
  return tree;
}

std::vector<ChunkFold> bcube_plan(const ReductionOrder&, const RingOrder& ring, std::int64_t count,
                                  std::int64_t) {
  const int n = ring.size();
  check_bcube_modelled(n);
  if (n != 3) return single_chunk(count, butterfly_over_ranks(n));
  const std::int64_t chunk_size = ceil_div(count, 3);
  std::vector<ChunkFold> plan;
  for (int g = 0; g < 3; ++g) {
    add_chunk(plan, g * chunk_size, (g + 1) * chunk_size, count, bcube3_chunk_fold(g));
  }
  return plan;
}

// A model: the all-reduce's fold of the block's elements.
FoldTree bcube_reduce_scatter_fold(const ReductionOrder&, const RingOrder& ring, int destination) {
  const int n = ring.size();
  check_bcube_modelled(n);
  return n == 3 ? bcube3_chunk_fold(destination) : butterfly_over_ranks(n);
}

}  // namespace

const OrderParts& gloo_ring_parts() {
  static const OrderParts parts{ring_plan, ring_reduce_scatter_fold};
  return parts;
}

const OrderParts& gloo_ring_chunked_parts() {
  static const OrderParts parts{ring_chunked_plan, ring_chunked_reduce_scatter_fold};
  return parts;
}

const OrderParts& gloo_bcube_parts() {
  static const OrderParts parts{bcube_plan, bcube_reduce_scatter_fold};
  return parts;
}

}  // namespace spmd::reduction_orders
