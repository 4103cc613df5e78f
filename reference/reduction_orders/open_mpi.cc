// Open MPI 4.1.4's coll/tuned all-reduce algorithms (ompi/mca/coll/base/coll_base_allreduce.c):
// ring (4), recursive doubling (3), Rabenseifner (6) and basic linear (1). Verified bitwise
// against Open MPI; see docs/reduction-orders.md. Reduce-scatter folds are a model: mpi_ring's
// block owned by d is the chunk whose fold ends at d; the others fold every block as their
// all-reduce does, without its count-based fallbacks (a block fold has no element count).

#include <bit>

#include "reference/reduction_orders/chunk_plans.h"
#include "reference/reduction_orders/order_parts.h"

namespace spmd::reduction_orders {
namespace {

// Recursive doubling (3) and Rabenseifner (6): the r = n - pof2 extra ranks are folded in pairs
// first, v_k = x_{2k} + x_{2k+1} for k < r, else v_k = x_{k+r}; then the butterfly over v.
FoldTree recursive_doubling_fold(int n) {
  const int pof2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(n)));
  const int extra = n - pof2;
  FoldTree tree;
  std::vector<int> v;
  for (int k = 0; k < pof2; ++k) {
    if (k < extra) {
      const int even = tree.add_leaf(2 * k);
      const int odd = tree.add_leaf(2 * k + 1);
      v.push_back(tree.add_op(even, odd));
    } else {
      v.push_back(tree.add_leaf(k + extra));
    }
  }
  add_butterfly(tree, v);
  return tree;
}

// Basic linear (1): x_0 + (x_1 + (... + (x_{n-2} + x_{n-1}))).
FoldTree linear_fold(int n) { return fold_right_nested(rank_order(n).walk(0, 1)); }

// Ring (4): block b: acc = x_b; acc = x_{b+1} + acc; ...; rank b-1 adds last.
FoldTree ring_block_fold(int n, std::int64_t block) {
  return fold_new_plus_acc(rank_order(n).walk(block, +1));
}

std::vector<ChunkFold> ring_plan(const ReductionOrder&, const RingOrder& ring, std::int64_t count,
                                 std::int64_t) {
  const int n = ring.size();
  // "if count < P it falls back to recursive doubling".
  if (count < n) return single_chunk(count, recursive_doubling_fold(n));
  // The first count % n blocks have ceil(count / n) elements, the rest floor(count / n).
  const std::int64_t early_blocks = count % n;
  const std::int64_t small_size = count / n;
  std::vector<ChunkFold> plan;
  std::int64_t begin = 0;
  for (int b = 0; b < n; ++b) {
    const std::int64_t size = small_size + (b < early_blocks ? 1 : 0);
    add_chunk(plan, begin, begin + size, count, ring_block_fold(n, b));
    begin += size;
  }
  return plan;
}

FoldTree ring_reduce_scatter_fold(const ReductionOrder&, const RingOrder& ring, int destination) {
  return ring_block_fold(ring.size(), destination + 1);
}

std::vector<ChunkFold> recursive_doubling_plan(const ReductionOrder&, const RingOrder& ring,
                                               std::int64_t count, std::int64_t) {
  return single_chunk(count, recursive_doubling_fold(ring.size()));
}

FoldTree recursive_doubling_reduce_scatter_fold(const ReductionOrder&, const RingOrder& ring, int) {
  return recursive_doubling_fold(ring.size());
}

std::vector<ChunkFold> rabenseifner_plan(const ReductionOrder&, const RingOrder& ring,
                                         std::int64_t count, std::int64_t) {
  const int n = ring.size();
  // "Rabenseifner falls back to basic linear if count < pof2".
  const std::int64_t pof2 = static_cast<std::int64_t>(std::bit_floor(static_cast<unsigned>(n)));
  if (count < pof2) return single_chunk(count, linear_fold(n));
  return single_chunk(count, recursive_doubling_fold(n));
}

std::vector<ChunkFold> linear_plan(const ReductionOrder&, const RingOrder& ring, std::int64_t count,
                                   std::int64_t) {
  return single_chunk(count, linear_fold(ring.size()));
}

FoldTree linear_reduce_scatter_fold(const ReductionOrder&, const RingOrder& ring, int) {
  return linear_fold(ring.size());
}

}  // namespace

const OrderParts& mpi_ring_parts() {
  static const OrderParts parts{ring_plan, ring_reduce_scatter_fold};
  return parts;
}

const OrderParts& mpi_recursive_doubling_parts() {
  static const OrderParts parts{recursive_doubling_plan, recursive_doubling_reduce_scatter_fold};
  return parts;
}

const OrderParts& mpi_rabenseifner_parts() {
  static const OrderParts parts{rabenseifner_plan, recursive_doubling_reduce_scatter_fold};
  return parts;
}

const OrderParts& mpi_linear_parts() {
  static const OrderParts parts{linear_plan, linear_reduce_scatter_fold};
  return parts;
}

}  // namespace spmd::reduction_orders
