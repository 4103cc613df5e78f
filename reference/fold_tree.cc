#include "reference/fold_tree.h"

#include <fmt/format.h>

#include <cstddef>
#include <utility>

#include "reference/error.h"

namespace spmd {

int FoldTree::add_leaf(int rank) {
  if (rank < 0) throw Error(fmt::format("FoldTree leaf rank {}, expected >= 0", rank));
  nodes.push_back(FoldNode{rank, -1, -1});
  return static_cast<int>(nodes.size()) - 1;
}

int FoldTree::add_identity() {
  nodes.push_back(FoldNode{FoldNode::kIdentityLeaf, -1, -1});
  return static_cast<int>(nodes.size()) - 1;
}

int FoldTree::add_op(int lhs, int rhs) {
  const int size = static_cast<int>(nodes.size());
  if (lhs < 0 || lhs >= size || rhs < 0 || rhs >= size) {
    throw Error(
        fmt::format("FoldTree operands {}, {}, expected earlier nodes 0..{}", lhs, rhs, size - 1));
  }
  nodes.push_back(FoldNode{FoldNode::kNotLeaf, lhs, rhs});
  return size;
}

namespace {

void append_leaf_ranks(const FoldTree& tree, int node, std::vector<int>& out) {
  const FoldNode& n = tree.nodes[static_cast<std::size_t>(node)];
  if (n.rank != FoldNode::kNotLeaf) {
    out.push_back(n.rank);
    return;
  }
  append_leaf_ranks(tree, n.lhs, out);
  append_leaf_ranks(tree, n.rhs, out);
}

void append_expression(const FoldTree& tree, int node, std::string& out) {
  const FoldNode& n = tree.nodes[static_cast<std::size_t>(node)];
  if (n.rank == FoldNode::kIdentityLeaf) {
    out += "id";
  } else if (n.rank != FoldNode::kNotLeaf) {
    out += fmt::format("{}", n.rank);
  } else {
    out += '(';
    append_expression(tree, n.lhs, out);
    out += " + ";
    append_expression(tree, n.rhs, out);
    out += ')';
  }
}

int root_of(const FoldTree& tree) { return static_cast<int>(tree.nodes.size()) - 1; }

}  // namespace

std::vector<int> FoldTree::leaf_ranks() const {
  std::vector<int> ranks;
  if (!nodes.empty()) append_leaf_ranks(*this, root_of(*this), ranks);
  return ranks;
}

std::string FoldTree::to_string() const {
  std::string text;
  if (!nodes.empty()) append_expression(*this, root_of(*this), text);
  return text;
}

FoldTree fold_from_identity(const std::vector<int>& ranks) {
  FoldTree tree;
  int acc = tree.add_identity();
  for (int rank : ranks) {
    const int x = tree.add_leaf(rank);
    acc = tree.add_op(acc, x);
  }
  return tree;
}

FoldTree fold_new_plus_acc(const std::vector<int>& ranks) {
  if (ranks.empty()) throw Error("fold_new_plus_acc: no ranks, expected at least one");
  FoldTree tree;
  int acc = tree.add_leaf(ranks.front());
  for (std::size_t k = 1; k < ranks.size(); ++k) {
    const int x = tree.add_leaf(ranks[k]);
    acc = tree.add_op(x, acc);
  }
  return tree;
}

FoldTree fold_right_nested(const std::vector<int>& ranks) {
  // x[r0] + (x[r1] + (... + x[r_last])) is the new-plus-acc fold walked from the last rank.
  return fold_new_plus_acc(std::vector<int>(ranks.rbegin(), ranks.rend()));
}

void add_butterfly(FoldTree& tree, std::vector<int> level) {
  while (level.size() > 1) {
    std::vector<int> next;
    for (std::size_t i = 0; i < level.size(); i += 2) {
      next.push_back(tree.add_op(level[i], level[i + 1]));
    }
    level = std::move(next);
  }
}

FoldTree butterfly_over_ranks(int group_size) {
  FoldTree tree;
  std::vector<int> leaves;
  for (int r = 0; r < group_size; ++r) leaves.push_back(tree.add_leaf(r));
  add_butterfly(tree, leaves);
  return tree;
}

}  // namespace spmd
