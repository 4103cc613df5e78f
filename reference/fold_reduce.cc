#include "reference/fold_reduce.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "reference/error.h"
#include "reference/scalar_arithmetic.h"

namespace spmd {
namespace {

// Elements evaluated per pass over the fold tree: every node's values for one tile stay in cache.
constexpr std::int64_t kTileElements = 1024;

// ---- Checks

void check_inputs(std::span<const Array> inputs, ReduceOp op, const char* caller) {
  if (inputs.empty()) {
    throw Error(std::string(caller) + ": no contributions, expected one per group rank");
  }
  const Array& first = inputs.front();
  for (std::size_t r = 1; r < inputs.size(); ++r) {
    if (inputs[r].dtype() != first.dtype() || inputs[r].shape() != first.shape()) {
      throw Error(fmt::format("{}: contribution {} is {}, expected {} like contribution 0", caller,
                              r, inputs[r].type_string(), first.type_string()));
    }
  }
  if (op == ReduceOp::sum && first.dtype() == DType::bool_) {
    throw Error(std::string(caller) +
                ": sum of bool contributions, expected them converted to int32 first (as psum "
                "does)");
  }
}

void check_tree(const FoldTree& tree, int group_size) {
  const auto fail = [](const std::string& what) {
    throw Error("reduce_with_tree: fold tree " + what);
  };
  if (tree.nodes.empty()) fail("is empty, expected at least one leaf");
  std::vector<int> uses(tree.nodes.size(), 0);
  for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
    const FoldNode& node = tree.nodes[i];
    const int index = static_cast<int>(i);
    if (node.rank == FoldNode::kNotLeaf) {
      if (node.lhs < 0 || node.lhs >= index || node.rhs < 0 || node.rhs >= index) {
        fail(fmt::format("node {} has operands {}, {}, expected earlier nodes", i, node.lhs,
                         node.rhs));
      }
      ++uses[static_cast<std::size_t>(node.lhs)];
      ++uses[static_cast<std::size_t>(node.rhs)];
    } else if (node.rank != FoldNode::kIdentityLeaf && (node.rank < 0 || node.rank >= group_size)) {
      fail(fmt::format("leaf rank {}, expected a rank in 0..{}", node.rank, group_size - 1));
    }
  }
  for (std::size_t i = 0; i + 1 < tree.nodes.size(); ++i) {
    if (uses[i] != 1) {
      fail(fmt::format(
          "node {} is used {} times, expected once (a tree whose root is the last node)", i,
          uses[i]));
    }
  }
}

// ---- Evaluation

// Folds one chunk [begin, end) tile by tile. Leaves read the inputs in place (or converted to
// the accumulator type), the identity is one constant row, and each inner node writes its own
// row: op(value(lhs), value(rhs)) for every element of the tile.
template <class T, class Acc, class Combine>
void fold_chunk(const FoldTree& tree, const std::vector<const T*>& inputs, Combine combine,
                Acc identity, std::int64_t begin, std::int64_t end, T* out) {
  const std::size_t node_count = tree.nodes.size();
  const auto tile = static_cast<std::size_t>(kTileElements);
  // One row of the tile per node (not std::vector: vector<bool> has no data()).
  const auto rows = std::make_unique<Acc[]>(node_count * tile);
  std::vector<const Acc*> value(node_count);
  for (std::size_t i = 0; i < node_count; ++i) {
    if (tree.nodes[i].rank == FoldNode::kIdentityLeaf) {
      std::fill_n(rows.get() + i * tile, tile, identity);
    }
  }

  for (std::int64_t tile_begin = begin; tile_begin < end; tile_begin += kTileElements) {
    const auto length = static_cast<std::size_t>(std::min(kTileElements, end - tile_begin));
    for (std::size_t i = 0; i < node_count; ++i) {
      const FoldNode& node = tree.nodes[i];
      Acc* row = rows.get() + i * tile;
      if (node.rank == FoldNode::kIdentityLeaf) {
        value[i] = row;
      } else if (node.rank != FoldNode::kNotLeaf) {
        const T* source = inputs[static_cast<std::size_t>(node.rank)] + tile_begin;
        if constexpr (std::is_same_v<Acc, T>) {
          value[i] = source;
        } else {
          for (std::size_t k = 0; k < length; ++k) row[k] = source[k].to_float();
          value[i] = row;
        }
      } else {
        const Acc* lhs = value[static_cast<std::size_t>(node.lhs)];
        const Acc* rhs = value[static_cast<std::size_t>(node.rhs)];
        for (std::size_t k = 0; k < length; ++k) row[k] = combine(lhs[k], rhs[k]);
        value[i] = row;
      }
    }
    const Acc* root = value.back();
    T* destination = out + tile_begin;
    for (std::size_t k = 0; k < length; ++k) {
      if constexpr (std::is_same_v<Acc, T>) destination[k] = root[k];
      else destination[k] = T::from_float(root[k]);  // one rounding at the end
    }
  }
}

// A root that is a rank's leaf is a plain copy of its bits (a group of one: XLA's single_replica
// memcpy, which keeps -0.0 and NaN payloads).
template <class T>
bool copy_if_single_leaf(const FoldTree& tree, const std::vector<const T*>& inputs,
                         std::int64_t begin, std::int64_t end, T* out) {
  const FoldNode& root = tree.nodes.back();
  if (root.rank < 0) return false;
  std::memcpy(out + begin, inputs[static_cast<std::size_t>(root.rank)] + begin,
              static_cast<std::size_t>(end - begin) * sizeof(T));
  return true;
}

template <class T, class Acc, class Combine>
void fold_chunks(std::span<const ChunkFold> chunks, const std::vector<const T*>& inputs,
                 Combine combine, Acc identity, T* out) {
  for (const ChunkFold& chunk : chunks) {
    if (chunk.begin >= chunk.end) continue;
    if (copy_if_single_leaf(chunk.tree, inputs, chunk.begin, chunk.end, out)) continue;
    fold_chunk(chunk.tree, inputs, combine, identity, chunk.begin, chunk.end, out);
  }
}

// Picks the element operation and its identity for accumulator type Acc.
template <class T, class Acc, bool kFlush>
void fold_chunks_with_op(std::span<const ChunkFold> chunks, const std::vector<const T*>& inputs,
                         ReduceOp op, T* out) {
  switch (op) {
    case ReduceOp::sum:
      return fold_chunks(chunks, inputs,
                         arith::flushing_if<Acc, kFlush>([](Acc a, Acc b) { return arith::add(a, b); }),
                         arith::sum_identity<Acc>(), out);
    case ReduceOp::max:
      return fold_chunks(chunks, inputs,
                         arith::flushing_if<Acc, kFlush>([](Acc a, Acc b) { return arith::max(a, b); }),
                         arith::max_identity<Acc>(), out);
    case ReduceOp::min:
      return fold_chunks(chunks, inputs,
                         arith::flushing_if<Acc, kFlush>([](Acc a, Acc b) { return arith::min(a, b); }),
                         arith::min_identity<Acc>(), out);
  }
}

template <class T, class Acc>
void fold_chunks_with_numerics(std::span<const ChunkFold> chunks,
                               const std::vector<const T*>& inputs, ReduceOp op,
                               const FloatNumerics& numerics, T* out) {
  if (numerics.flush_subnormals) fold_chunks_with_op<T, Acc, true>(chunks, inputs, op, out);
  else fold_chunks_with_op<T, Acc, false>(chunks, inputs, op, out);
}

Array evaluate(std::span<const Array> inputs, ReduceOp op, std::span<const ChunkFold> chunks,
               const ReductionOrder& order) {
  const Array& first = inputs.front();
  Array result(first.dtype(), first.shape());
  visit_dtype(first.dtype(), [&](auto zero) {
    using T = decltype(zero);
    std::vector<const T*> sources;
    for (const Array& input : inputs) sources.push_back(input.values<T>().data());
    T* out = result.mutable_values<T>().data();
    // XLA:CPU AllReducePromotion({BF16 -> F32}): the sum runs in float32, one rounding at the end.
    if constexpr (std::is_same_v<T, BFloat16>) {
      if (op == ReduceOp::sum && order.bf16_accumulates_in_f32()) {
        fold_chunks_with_numerics<T, float>(chunks, sources, op, order.numerics(), out);
        return;
      }
    }
    fold_chunks_with_numerics<T, T>(chunks, sources, op, order.numerics(), out);
  });
  return result;
}

}  // namespace

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
  }
  return "unknown";
}

Array all_reduce(std::span<const Array> contributions, ReduceOp op, const ReductionOrder& order) {
  check_inputs(contributions, op, "all_reduce");
  const Array& first = contributions.front();
  const std::vector<ChunkFold> plan =
      order.all_reduce_plan(static_cast<int>(contributions.size()), first.size(), first.dtype());
  return evaluate(contributions, op, plan, order);
}

Array reduce_with_tree(std::span<const Array> blocks, ReduceOp op, const FoldTree& tree,
                       const ReductionOrder& order) {
  check_inputs(blocks, op, "reduce_with_tree");
  check_tree(tree, static_cast<int>(blocks.size()));
  const ChunkFold whole{0, blocks.front().size(), tree};
  return evaluate(blocks, op, std::span<const ChunkFold>(&whole, 1), order);
}

Array reduce_with_plan(std::span<const Array> contributions, ReduceOp op,
                       std::span<const ChunkFold> plan, const ReductionOrder& order) {
  check_inputs(contributions, op, "reduce_with_plan");
  const std::int64_t count = contributions.front().size();
  std::int64_t previous_end = 0;
  for (const ChunkFold& chunk : plan) {
    if (chunk.begin < previous_end || chunk.end < chunk.begin || chunk.end > count) {
      throw Error(fmt::format(
          "reduce_with_plan: chunk [{}, {}), expected increasing chunks within [0, {}) after {}",
          chunk.begin, chunk.end, count, previous_end));
    }
    check_tree(chunk.tree, static_cast<int>(contributions.size()));
    previous_end = chunk.end;
  }
  return evaluate(contributions, op, plan, order);
}

}  // namespace spmd
