// The simulator's own algorithms (collectives/): no library behind them, so their orders are
// definitions, which the schedules in collectives/ must reproduce. Where the simulator runs a
// ring instead (halving_doubling over a group that is not a power of two, torus dims that do not
// cover the group, every reduce-scatter but halving_doubling's and torus's), they fold as
// nccl_ring.

#include <fmt/format.h>

#include <bit>
#include <cstddef>
#include <span>
#include <utility>

#include "reference/error.h"
#include "reference/reduction_orders/chunk_plans.h"
#include "reference/reduction_orders/order_parts.h"
#include "reference/torus_passes.h"

namespace spmd::reduction_orders {
namespace {

// Where the simulator runs a ring instead (an algorithm that cannot run the group, and every
// reduce-scatter by a tree, a two-way ring or the bidirectional torus, which have no per-block
// fold), the orders fold as NCCL's ring.
std::vector<ChunkFold> ring_plan(const ReductionOrder& order, const RingOrder& ring,
                                 std::int64_t count, std::int64_t element_bytes) {
  return nccl_ring_parts().all_reduce_plan(order, ring, count, element_bytes);
}

FoldTree ring_reduce_scatter_fold(const ReductionOrder& order, const RingOrder& ring,
                                  int destination) {
  return nccl_ring_parts().reduce_scatter_fold(order, ring, destination);
}

// ---- Heap-ordered binary tree over ring positions: value(i) = (x_i + value(2i+1)) + value(2i+2).

int add_heap_subtree(FoldTree& tree, const RingOrder& ring, int position) {
  int value = tree.add_leaf(ring.rank_at(position));
  for (int child : {2 * position + 1, 2 * position + 2}) {
    if (child >= ring.size()) break;
    const int subtree = add_heap_subtree(tree, ring, child);
    value = tree.add_op(value, subtree);
  }
  return value;
}

FoldTree binary_tree_fold(const RingOrder& ring) {
  FoldTree tree;
  add_heap_subtree(tree, ring, 0);
  return tree;
}

std::vector<ChunkFold> binary_tree_plan(const ReductionOrder&, const RingOrder& ring,
                                        std::int64_t count, std::int64_t) {
  return single_chunk(count, binary_tree_fold(ring));
}

// ---- Recursive halving pairs ranks at distance n/2 first, then n/4, ..., 1, the lower rank's
// partial on the left: w_r = x_r + x_{r+n/2}, then w_r + w_{r+n/4}, ... That is the butterfly
// over the ranks in bit-reversed order.

bool is_power_of_two(int n) { return std::has_single_bit(static_cast<unsigned>(n)); }

FoldTree halving_doubling_fold(int n) {
  if (!is_power_of_two(n)) {
    throw Error(
        fmt::format("halving_doubling order for group size {}, expected a power of two", n));
  }
  const int bits = std::countr_zero(static_cast<unsigned>(n));
  FoldTree tree;
  std::vector<int> leaves;
  for (int i = 0; i < n; ++i) {
    int reversed = 0;
    for (int b = 0; b < bits; ++b) reversed |= ((i >> b) & 1) << (bits - 1 - b);
    leaves.push_back(tree.add_leaf(reversed));
  }
  add_butterfly(tree, leaves);
  return tree;
}

std::vector<ChunkFold> halving_doubling_plan(const ReductionOrder& order, const RingOrder& ring,
                                             std::int64_t count, std::int64_t element_bytes) {
  if (!is_power_of_two(ring.size())) return ring_plan(order, ring, count, element_bytes);
  return single_chunk(count, halving_doubling_fold(ring.size()));
}

FoldTree halving_doubling_reduce_scatter_fold(const ReductionOrder& order, const RingOrder& ring,
                                              int destination) {
  if (!is_power_of_two(ring.size())) return ring_reduce_scatter_fold(order, ring, destination);
  return halving_doubling_fold(ring.size());
}

// ---- Two halves: the first first_half_elements(count) on one ring or tree, the rest on its
// reversed ring or mirrored tree.

std::vector<ChunkFold> bidirectional_ring_plan(const ReductionOrder& order, const RingOrder& ring,
                                               std::int64_t count, std::int64_t element_bytes) {
  const std::int64_t first = first_half_elements(count);
  std::vector<ChunkFold> plan = ring_plan(order, ring, first, element_bytes);
  append_shifted(plan, ring_plan(order, ring.reversed(), count - first, element_bytes), first);
  return plan;
}

std::vector<ChunkFold> double_binary_tree_plan(const ReductionOrder&, const RingOrder& ring,
                                               std::int64_t count, std::int64_t) {
  const std::int64_t first = first_half_elements(count);
  std::vector<ChunkFold> plan;
  add_chunk(plan, 0, first, count, binary_tree_fold(ring));
  add_chunk(plan, first, count, count, binary_tree_fold(ring.mirrored()));
  return plan;
}

// ---- Torus passes (reference/torus_passes.h). Along a pass's i-th dimension j the range held so
// far is split evenly into dims[j] blocks and block b is reduced as on an NCCL ring along the
// line, starting one hop after coordinate b (b + direction) and ending at b. An element whose
// blocks are b (one per dimension) therefore folds as
//   T(i) = new_plus_acc over c_j in (b_j + s, b_j + 2s, ..., b_j) of T(i - 1) at c_j,
// s the direction, j = dimension_order[i], outermost the last dimension reduce-scattered, with a
// leaf at a full coordinate.
class TorusFold {
 public:
  TorusFold(std::span<const int> dims, const TorusPass& pass)
      : grid_(dims), order_(pass.dimension_order), direction_(pass.direction) {}

  FoldTree fold(const std::vector<int>& blocks) {
    FoldTree tree;
    std::vector<int> coordinates = blocks;
    add(tree, blocks, coordinates, static_cast<int>(order_.size()) - 1);
    return tree;
  }

 private:
  int add(FoldTree& tree, const std::vector<int>& blocks, std::vector<int>& coordinates,
          int level) {
    if (level < 0) return tree.add_leaf(grid_.rank_at(coordinates));
    const auto j = static_cast<std::size_t>(order_[static_cast<std::size_t>(level)]);
    const int size = grid_.size(j);
    int acc = -1;
    for (int k = 1; k <= size; ++k) {
      coordinates[j] = ((blocks[j] + direction_ * k) % size + size) % size;
      const int partial = add(tree, blocks, coordinates, level - 1);
      acc = acc < 0 ? partial : tree.add_op(partial, acc);
    }
    return acc;
  }

  TorusGrid grid_;
  std::vector<int> order_;
  int direction_;
};

// Splits [begin, end) level by level in the pass's order and adds each final block's fold.
void add_torus_chunks(std::vector<ChunkFold>& plan, TorusFold& folds, std::span<const int> dims,
                      const TorusPass& pass, std::vector<int>& blocks, std::size_t level,
                      std::int64_t begin, std::int64_t end) {
  if (level == pass.dimension_order.size()) {
    if (begin < end) plan.push_back(ChunkFold{begin, end, folds.fold(blocks)});
    return;
  }
  const auto j = static_cast<std::size_t>(pass.dimension_order[level]);
  const int parts = dims[j];
  for (int b = 0; b < parts; ++b) {
    blocks[j] = b;
    add_torus_chunks(plan, folds, dims, pass, blocks, level + 1,
                     begin + even_split_begin(end - begin, parts, b),
                     begin + even_split_begin(end - begin, parts, b + 1));
  }
}

// The passes' chunks, in element order. A torus order applies when its dims cover the group
// exactly; otherwise the simulator runs the all-reduce as a ring, and so does this order.
std::vector<ChunkFold> torus_passes_plan(
    const ReductionOrder& order, const RingOrder& ring, std::int64_t count,
    std::int64_t element_bytes,
    std::vector<TorusPass> (*passes_of)(std::span<const int> dims, std::int64_t count)) {
  const std::vector<int>& dims = order.torus_dims;
  if (!torus_dims_cover(dims, ring.size())) return ring_plan(order, ring, count, element_bytes);
  std::vector<ChunkFold> plan;
  for (const TorusPass& pass : passes_of(dims, count)) {
    TorusFold folds(dims, pass);
    std::vector<int> blocks(dims.size(), 0);
    add_torus_chunks(plan, folds, dims, pass, blocks, 0, pass.begin, pass.end);
  }
  return plan;
}

std::vector<ChunkFold> torus_plan(const ReductionOrder& order, const RingOrder& ring,
                                  std::int64_t count, std::int64_t element_bytes) {
  return torus_passes_plan(order, ring, count, element_bytes, torus_passes);
}

// The torus reduce-scatter (torus_rank_order_passes) keeps, at every rank, its own shard: the
// blocks of its elements along each dimension are the destination's coordinates, so the whole
// shard folds as the torus fold of those blocks.
FoldTree torus_reduce_scatter_fold(const ReductionOrder& order, const RingOrder& ring,
                                   int destination) {
  const std::vector<int>& dims = order.torus_dims;
  if (!torus_dims_cover(dims, ring.size())) {
    return ring_reduce_scatter_fold(order, ring, destination);
  }
  const TorusGrid grid(dims);
  std::vector<int> blocks;
  for (std::size_t j = 0; j < grid.count(); ++j) blocks.push_back(grid.coordinate(destination, j));
  TorusFold folds(dims, torus_rank_order_passes(dims, ring.size()).front());
  return folds.fold(blocks);
}

std::vector<ChunkFold> bidirectional_torus_plan(const ReductionOrder& order, const RingOrder& ring,
                                                std::int64_t count, std::int64_t element_bytes) {
  return torus_passes_plan(order, ring, count, element_bytes, bidirectional_torus_passes);
}

// The bidirectional torus reduce-scatter (bidirectional_torus_piece_passes) splits every block
// evenly between its passes: piece p folds as pass p's torus fold of the destination's
// coordinates. Where its dims do not cover the group it runs a ring: one chunk, as nccl_ring.
std::vector<ChunkFold> bidirectional_torus_reduce_scatter_plan(const ReductionOrder& order,
                                                               const RingOrder& ring,
                                                               int destination,
                                                               std::int64_t count) {
  const std::vector<int>& dims = order.torus_dims;
  if (!torus_dims_cover(dims, ring.size())) {
    return single_chunk(count, ring_reduce_scatter_fold(order, ring, destination));
  }
  const TorusGrid grid(dims);
  std::vector<int> blocks;
  for (std::size_t j = 0; j < grid.count(); ++j) blocks.push_back(grid.coordinate(destination, j));
  const std::vector<TorusPass> passes = bidirectional_torus_piece_passes(dims, count);
  const int pieces = static_cast<int>(passes.size());
  std::vector<ChunkFold> plan;
  for (int p = 0; p < pieces; ++p) {
    TorusFold folds(dims, passes[static_cast<std::size_t>(p)]);
    const std::int64_t begin = even_split_begin(count, pieces, p);
    const std::int64_t end = even_split_begin(count, pieces, p + 1);
    if (begin < end) plan.push_back(ChunkFold{begin, end, folds.fold(blocks)});
  }
  return plan;
}

}  // namespace

const OrderParts& binary_tree_parts() {
  static const OrderParts parts{binary_tree_plan, ring_reduce_scatter_fold};
  return parts;
}

const OrderParts& halving_doubling_parts() {
  static const OrderParts parts{halving_doubling_plan, halving_doubling_reduce_scatter_fold};
  return parts;
}

const OrderParts& bidirectional_ring_parts() {
  static const OrderParts parts{bidirectional_ring_plan, ring_reduce_scatter_fold};
  return parts;
}

const OrderParts& double_binary_tree_parts() {
  static const OrderParts parts{double_binary_tree_plan, ring_reduce_scatter_fold};
  return parts;
}

const OrderParts& torus_parts() {
  static const OrderParts parts{torus_plan, torus_reduce_scatter_fold};
  return parts;
}

const OrderParts& bidirectional_torus_parts() {
  static const OrderParts parts{bidirectional_torus_plan, ring_reduce_scatter_fold,
                                bidirectional_torus_reduce_scatter_plan};
  return parts;
}

}  // namespace spmd::reduction_orders
