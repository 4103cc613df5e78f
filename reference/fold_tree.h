#pragma once
// A fold over a group's contributions written as a binary expression tree over group ranks, and
// the common shapes of fold that several libraries share. reduction_order.h says which tree each
// library folds in; fold_reduce.h evaluates one.

#include <string>
#include <vector>

namespace spmd {

// A binary expression over group ranks. A leaf is a rank, or the identity element (+0 for sums)
// when rank == kIdentityLeaf; an inner node computes op(value(lhs), value(rhs)) with lhs / rhs
// indices of earlier nodes. The last node is the root.
struct FoldNode {
  static constexpr int kIdentityLeaf = -2;
  static constexpr int kNotLeaf = -1;
  int rank = kNotLeaf;
  int lhs = -1;
  int rhs = -1;
  friend bool operator==(const FoldNode&, const FoldNode&) = default;
};

struct FoldTree {
  std::vector<FoldNode> nodes;

  int add_leaf(int rank);
  int add_identity();
  int add_op(int lhs, int rhs);
  // The ranks in the order their leaves appear (left to right), for tests and messages. An
  // identity leaf appears as kIdentityLeaf.
  std::vector<int> leaf_ranks() const;
  // e.g. "((0 + 1) + 2)" with "id" for the identity; for tests and docs. "+" stands for the
  // reduction operator, whichever it is.
  std::string to_string() const;
  friend bool operator==(const FoldTree&, const FoldTree&) = default;
};

// Common shapes of fold.
// acc = identity; acc = acc + x[r] for r in ranks (XLA:CPU).
FoldTree fold_from_identity(const std::vector<int>& ranks);
// acc = x[ranks[0]]; acc = x[ranks[k]] + acc for k = 1.. (NCCL / Gloo / Open MPI rings).
FoldTree fold_new_plus_acc(const std::vector<int>& ranks);
// x[r0] + (x[r1] + (... + (x[r_{n-2}] + x[r_{n-1}]))) (Open MPI basic linear).
FoldTree fold_right_nested(const std::vector<int>& ranks);
// Pairs neighbours level by level: ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + ...), on node ids
// `level` of `tree` (a power of two of them); the last node added is the butterfly's root.
void add_butterfly(FoldTree& tree, std::vector<int> level);
// The butterfly over the ranks 0..group_size-1 (a power of two) in rank order.
FoldTree butterfly_over_ranks(int group_size);

}  // namespace spmd
