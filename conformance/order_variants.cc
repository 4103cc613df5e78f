#include "conformance/order_variants.h"

#include <algorithm>
#include <utility>

#include "reference/ring_order.h"
#include "reference/torus_passes.h"

namespace spmd::conformance {
namespace {

using RankMap = std::vector<int>;  // new rank of each leaf's rank

std::vector<ChunkFold> relabelled(std::vector<ChunkFold> plan, const RankMap& new_rank) {
  for (ChunkFold& chunk : plan) {
    for (FoldNode& node : chunk.tree.nodes) {
      if (node.rank >= 0) node.rank = new_rank[static_cast<std::size_t>(node.rank)];
    }
  }
  return plan;
}

// The rank at ring position p becomes the rank at position p + 1: the plan of the same order on
// the ring rotated by one (ring'[p] = ring[p + 1]).
RankMap ring_rotated(const RingOrder& ring) {
  RankMap map(static_cast<std::size_t>(ring.size()));
  for (int p = 0; p < ring.size(); ++p)
    map[static_cast<std::size_t>(ring.rank_at(p))] = ring.rank_at(p + 1);
  return map;
}

// The ring walked the other way from the same start (RingOrder::reversed).
RankMap ring_reversed(const RingOrder& ring) {
  RankMap map(static_cast<std::size_t>(ring.size()));
  for (int p = 0; p < ring.size(); ++p)
    map[static_cast<std::size_t>(ring.rank_at(p))] = ring.rank_at(-p);
  return map;
}

// Ranks r and r ^ 1 exchanged (recursive doubling's partners); an odd last rank stays.
RankMap pairs_swapped(int group_size) {
  RankMap map;
  for (int r = 0; r < group_size; ++r) map.push_back((r ^ 1) < group_size ? r ^ 1 : r);
  return map;
}

// Chunk i folds with the tree of chunk k - 1 - i (two halves exchanged, a ring's chunks taken
// from the other end).
std::vector<ChunkFold> chunk_trees_reversed(std::vector<ChunkFold> plan) {
  const std::size_t k = plan.size();
  for (std::size_t i = 0; i < k / 2; ++i) std::swap(plan[i].tree, plan[k - 1 - i].tree);
  return plan;
}

bool is_identity(const FoldTree& tree, int node_index) {
  return tree.nodes[static_cast<std::size_t>(node_index)].rank == FoldNode::kIdentityLeaf;
}

// The tree with the operands of every addition in a fixed order: "(0+(1+2))" and "((2+1)+0)"
// give the same text. An addition of the identity is left out: id + x is x but for -0.0, which
// it makes +0.0, and that shows only where every operand is -0.0 (commutative_form marks it).
std::string operand_form(const FoldTree& tree, int node_index) {
  const FoldNode& node = tree.nodes[static_cast<std::size_t>(node_index)];
  if (node.rank >= 0) return std::to_string(node.rank);
  if (node.rank == FoldNode::kIdentityLeaf) return "id";
  if (is_identity(tree, node.lhs)) return operand_form(tree, node.rhs);
  if (is_identity(tree, node.rhs)) return operand_form(tree, node.lhs);
  std::string lhs = operand_form(tree, node.lhs);
  std::string rhs = operand_form(tree, node.rhs);
  if (rhs < lhs) std::swap(lhs, rhs);
  return "(" + lhs + "+" + rhs + ")";
}

// Folds from the identity give +0.0 where every operand is -0.0, the others -0.0.
std::string commutative_form(const FoldTree& tree) {
  bool from_identity = false;
  for (const FoldNode& node : tree.nodes) from_identity |= node.rank == FoldNode::kIdentityLeaf;
  const std::string form = operand_form(tree, static_cast<int>(tree.nodes.size()) - 1);
  return from_identity ? "id:" + form : form;
}

struct FormRange {
  std::int64_t begin, end;
  std::string form;
  friend bool operator==(const FormRange&, const FormRange&) = default;
};

// The plan as ranges of elements with one commutative form each, neighbours of the same form
// merged.
std::vector<FormRange> form_ranges(std::span<const ChunkFold> plan) {
  std::vector<FormRange> ranges;
  for (const ChunkFold& chunk : plan) {
    if (chunk.begin >= chunk.end) continue;
    std::string form = commutative_form(chunk.tree);
    if (!ranges.empty() && ranges.back().end == chunk.begin && ranges.back().form == form) {
      ranges.back().end = chunk.end;
    } else {
      ranges.push_back({chunk.begin, chunk.end, std::move(form)});
    }
  }
  return ranges;
}

void add_unless_same(WrongOrders& out, const std::vector<ChunkFold>& correct, std::string name,
                     std::vector<ChunkFold> plan, std::string_view same_reason) {
  if (same_folds(correct, plan)) {
    out.skipped.push_back({std::move(name), std::string(same_reason)});
  } else {
    out.orders.push_back({std::move(name), std::move(plan)});
  }
}

}  // namespace

std::int64_t chunk_alignment_elements(const ReductionOrder& order, int group_size, DType dtype) {
  using enum ReductionAlgorithm;
  const bool power_of_two = (group_size & (group_size - 1)) == 0;
  const bool nccl_chunks = order.algorithm == nccl_ring || order.algorithm == bidirectional_ring ||
                           (order.algorithm == halving_doubling && !power_of_two) ||
                           ((order.algorithm == torus || order.algorithm == bidirectional_torus) &&
                            !torus_dims_cover(order.torus_dims, group_size));
  const auto element_bytes = static_cast<std::int64_t>(dtype_size_bytes(dtype));
  return nccl_chunks ? std::max<std::int64_t>(1, 16 / element_bytes) : 1;
}

std::vector<ChunkFold> chunk_boundaries_moved(std::span<const ChunkFold> plan,
                                              std::int64_t shift_elements, std::int64_t count) {
  std::vector<ChunkFold> moved;
  std::int64_t begin = 0;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const bool last = i + 1 == plan.size();
    const std::int64_t end =
        last ? plan[i].end : std::clamp(plan[i].end + shift_elements, begin, count);
    if (begin < end) moved.push_back({begin, end, plan[i].tree});
    begin = end;
  }
  return moved;
}

bool same_folds(std::span<const ChunkFold> a, std::span<const ChunkFold> b) {
  return form_ranges(a) == form_ranges(b);
}

std::vector<std::pair<std::int64_t, std::int64_t>> ranges_folded_differently(
    std::span<const ChunkFold> a, std::span<const ChunkFold> b) {
  const std::vector<FormRange> left = form_ranges(a), right = form_ranges(b);
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  std::size_t i = 0, j = 0;
  while (i < left.size() && j < right.size()) {
    const std::int64_t begin = std::max(left[i].begin, right[j].begin);
    const std::int64_t end = std::min(left[i].end, right[j].end);
    if (begin < end && left[i].form != right[j].form) {
      if (!ranges.empty() && ranges.back().second == begin) ranges.back().second = end;
      else ranges.emplace_back(begin, end);
    }
    if (left[i].end <= right[j].end) ++i;
    else ++j;
  }
  return ranges;
}

WrongOrders wrong_orders(const ReductionOrder& order, int group_size, std::int64_t count,
                         DType dtype) {
  const std::vector<ChunkFold> correct = order.all_reduce_plan(group_size, count, dtype);
  const RingOrder ring(order.ring, group_size);
  WrongOrders out;
  constexpr std::string_view kSameFold = "gives the same fold, up to operand order";
  add_unless_same(out, correct, "ring_rotated", relabelled(correct, ring_rotated(ring)), kSameFold);
  add_unless_same(out, correct, "ring_reversed", relabelled(correct, ring_reversed(ring)),
                  kSameFold);
  add_unless_same(out, correct, "pairs_swapped", relabelled(correct, pairs_swapped(group_size)),
                  kSameFold);
  const std::int64_t unit = chunk_alignment_elements(order, group_size, dtype);
  constexpr std::string_view kOneFold = "every element in chunks of the same fold";
  add_unless_same(out, correct, "chunk_boundaries_later",
                  chunk_boundaries_moved(correct, unit, count), kOneFold);
  add_unless_same(out, correct, "chunk_boundaries_earlier",
                  chunk_boundaries_moved(correct, -unit, count), kOneFold);
  add_unless_same(out, correct, "chunk_trees_reversed", chunk_trees_reversed(correct), kOneFold);
  add_unless_same(out, correct, "rank_order",
                  ReductionOrder{}.all_reduce_plan(group_size, count, dtype),
                  "is XLA:CPU's rank-order fold itself");
  return out;
}

}  // namespace spmd::conformance
