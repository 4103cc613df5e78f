#include "reference/reduction_order.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <string>
#include <utility>

#include "reference/error.h"

// Each algorithm below follows shared/facts/reduction-orders.md; the section is cited at the top
// of its code. Indices are taken mod n throughout. The Gloo and Open MPI orders there were verified
// bitwise; the NCCL and XLA:CPU orders were read from source only.

namespace spmd {

// ---------------------------------------------------------------------------------------------
// FoldTree

int FoldTree::add_leaf(int rank) {
  if (rank < 0) throw Error("FoldTree leaf rank " + std::to_string(rank) + ", expected >= 0");
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
    throw Error("FoldTree operands " + std::to_string(lhs) + ", " + std::to_string(rhs) +
                ", expected earlier nodes 0.." + std::to_string(size - 1));
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
    out += std::to_string(n.rank);
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

// ---------------------------------------------------------------------------------------------
// Common shapes of fold

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

// ---------------------------------------------------------------------------------------------
// Algorithm names

namespace {

struct AlgorithmName {
  ReductionAlgorithm algorithm;
  std::string_view name;
};

constexpr AlgorithmName kAlgorithmNames[] = {
    {ReductionAlgorithm::xla_cpu, "xla_cpu"},
    {ReductionAlgorithm::nccl_ring, "nccl_ring"},
    {ReductionAlgorithm::nccl_tree_chain, "nccl_tree_chain"},
    {ReductionAlgorithm::gloo_ring, "gloo_ring"},
    {ReductionAlgorithm::gloo_ring_chunked, "gloo_ring_chunked"},
    {ReductionAlgorithm::gloo_bcube, "gloo_bcube"},
    {ReductionAlgorithm::mpi_ring, "mpi_ring"},
    {ReductionAlgorithm::mpi_recursive_doubling, "mpi_recursive_doubling"},
    {ReductionAlgorithm::mpi_rabenseifner, "mpi_rabenseifner"},
    {ReductionAlgorithm::mpi_linear, "mpi_linear"},
    {ReductionAlgorithm::binary_tree, "binary_tree"},
    {ReductionAlgorithm::halving_doubling, "halving_doubling"},
    {ReductionAlgorithm::bidirectional_ring, "bidirectional_ring"},
    {ReductionAlgorithm::double_binary_tree, "double_binary_tree"},
    {ReductionAlgorithm::torus, "torus"},
};

}  // namespace

std::string_view reduction_algorithm_name(ReductionAlgorithm algorithm) {
  for (const auto& entry : kAlgorithmNames) {
    if (entry.algorithm == algorithm) return entry.name;
  }
  throw Error("reduction algorithm " + std::to_string(static_cast<int>(algorithm)) +
              " has no name, expected a ReductionAlgorithm value");
}

ReductionAlgorithm reduction_algorithm_from_name(std::string_view name) {
  std::string valid;
  for (const auto& entry : kAlgorithmNames) {
    if (entry.name == name) return entry.algorithm;
    valid += valid.empty() ? "" : ", ";
    valid += entry.name;
  }
  throw Error("reduction algorithm '" + std::string(name) + "' is unknown, expected one of: " +
              valid);
}

// ---------------------------------------------------------------------------------------------
// Helpers for the orders

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return ceil_div(value, multiple) * multiple;
}
int mod(std::int64_t i, int n) { return static_cast<int>(((i % n) + n) % n); }

std::string join(const std::vector<int>& values) {
  std::string text;
  for (std::size_t i = 0; i < values.size(); ++i) {
    text += (i ? "," : "") + std::to_string(values[i]);
  }
  return text;
}

// The group's ring: position i holds rank_at(i). Validated on construction.
class Ring {
 public:
  Ring(int group_size, const std::vector<int>& ring) : ranks_(ring) {
    if (ranks_.empty()) {
      for (int r = 0; r < group_size; ++r) ranks_.push_back(r);
    }
    std::vector<int> sorted = ranks_;
    std::sort(sorted.begin(), sorted.end());
    bool permutation = static_cast<int>(sorted.size()) == group_size;
    for (int r = 0; permutation && r < group_size; ++r) {
      permutation = sorted[static_cast<std::size_t>(r)] == r;
    }
    if (!permutation) {
      throw Error("reduction order ring " + join(ring) + " for group size " +
                  std::to_string(group_size) + ", expected a permutation of 0.." +
                  std::to_string(group_size - 1));
    }
  }

  int size() const { return static_cast<int>(ranks_.size()); }
  int rank_at(std::int64_t position) const {
    return ranks_[static_cast<std::size_t>(mod(position, size()))];
  }
  int position_of(int rank) const {
    return static_cast<int>(std::find(ranks_.begin(), ranks_.end(), rank) - ranks_.begin());
  }
  // The n ranks at positions first, first + step, first + 2 step, ...
  std::vector<int> walk(std::int64_t first, int step) const {
    std::vector<int> ranks;
    for (int k = 0; k < size(); ++k) ranks.push_back(rank_at(first + std::int64_t{k} * step));
    return ranks;
  }

 private:
  std::vector<int> ranks_;
};

// Group ranks in ring form, for the algorithms whose ranks are the group ranks (Gloo, MPI).
Ring rank_order(int group_size) { return Ring(group_size, {}); }

FoldTree single_leaf() {
  FoldTree tree;
  tree.add_leaf(0);
  return tree;
}

// Appends the chunk [begin, end) clipped to [0, count), unless it is empty.
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

// Pairs neighbours level by level: ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + ...). `level` holds
// node ids; its size must be a power of two.
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

// ---- XLA:CPU (facts §5.1, in_process_communicator.cc): out = identity; out += in_j, rank order.

FoldTree xla_cpu_fold(int group_size) {
  return fold_from_identity(rank_order(group_size).walk(0, 1));
}

// ---- NCCL ring (facts §1.1, §1.2; src/device/all_reduce.h runRing, Simple protocol, 1 channel).

// Step 0 at ring index i sends chunk i-1, so chunk c starts at ring index c+1; each later step
// computes local + received (prims_simple.h: srcs[0] is the local input), and ring index c adds
// last.
FoldTree nccl_ring_chunk_fold(const Ring& ring, std::int64_t chunk) {
  return fold_new_plus_acc(ring.walk(chunk + 1, +1));
}

std::vector<ChunkFold> nccl_ring_plan(const Ring& ring, std::int64_t count,
                                      std::int64_t element_bytes, std::int64_t chunk_bytes) {
  const int n = ring.size();
  std::vector<FoldTree> chunk_folds;
  for (int c = 0; c < n; ++c) chunk_folds.push_back(nccl_ring_chunk_fold(ring, c));

  const std::int64_t full_chunk_count = chunk_bytes / element_bytes;
  const std::int64_t loop_count = n * full_chunk_count;
  std::vector<ChunkFold> plan;
  for (std::int64_t loop_begin = 0; loop_begin < count; loop_begin += loop_count) {
    const std::int64_t remaining = count - loop_begin;
    std::int64_t chunk_count = full_chunk_count;
    // all_reduce.h: "if (remCount < loopCount) chunkCount = alignUp(divUp(remCount, nranks),
    // 16/sizeof(T))"; trailing chunks of the last loop may be empty.
    if (remaining < loop_count) chunk_count = round_up(ceil_div(remaining, n), 16 / element_bytes);
    for (int c = 0; c < n; ++c) {
      add_chunk(plan, loop_begin + c * chunk_count, loop_begin + (c + 1) * chunk_count, count,
                chunk_folds[static_cast<std::size_t>(c)]);
    }
  }
  return plan;
}

// ---- NCCL tree within one node (facts §1.3; connect.cc ncclTopoPreset): a chain whose last
// member starts, so acc = x[t[n-1]]; acc = x[t[k]] + acc for k = n-2..0.

FoldTree nccl_tree_chain_fold(const Ring& chain) { return fold_right_nested(chain.walk(0, 1)); }

// ---- Gloo ring (facts §3.4; gloo/allreduce.cc ring()). Data flows toward rank - 1.

// Chunk c starts at rank c-1 and goes down the ranks: acc = x[c-1]; acc = x[c-2] + acc; ...;
// rank c adds last and holds the final value.
FoldTree gloo_ring_chunk_fold(int group_size, std::int64_t chunk) {
  return fold_new_plus_acc(rank_order(group_size).walk(chunk - 1, -1));
}

std::vector<ChunkFold> gloo_ring_plan(int n, std::int64_t count, std::int64_t element_bytes,
                                      std::int64_t max_segment_bytes) {
  const std::int64_t total_bytes = count * element_bytes;
  // gloo/allreduce.cc rounds maxSegmentSize down to whole elements (at least one); this equals
  // the facts' maxSegBytes whenever that is a multiple of the element size (1 MiB is).
  const std::int64_t max_bytes =
      element_bytes * std::max<std::int64_t>(1, max_segment_bytes / element_bytes);
  // At least two segments per rank, and the same number on every rank.
  const std::int64_t num_segments =
      round_up(std::max<std::int64_t>(ceil_div(total_bytes, max_bytes), 2 * n), n);
  const std::int64_t segments_per_rank = num_segments / n;
  const std::int64_t segment_bytes = round_up(ceil_div(total_bytes, num_segments), element_bytes);
  const std::int64_t chunk_elements = segments_per_rank * segment_bytes / element_bytes;

  std::vector<ChunkFold> plan;
  for (int c = 0; c < n; ++c) {
    add_chunk(plan, c * chunk_elements, (c + 1) * chunk_elements, count,
              gloo_ring_chunk_fold(n, c));
  }
  return plan;
}

// ---- Gloo AllreduceRingChunked (facts §3.4). Data flows toward rank + 1.

// Chunk pair j (chunks 2j and 2j+1): acc = x_j; acc = x_{j+1} + acc; ...; rank j-1 adds last.
FoldTree gloo_ring_chunked_pair_fold(int group_size, std::int64_t pair) {
  return fold_new_plus_acc(rank_order(group_size).walk(pair, +1));
}

std::vector<ChunkFold> gloo_ring_chunked_plan(int n, std::int64_t count) {
  const int chunks = 2 * n;
  const std::int64_t chunk_size = std::max<std::int64_t>(256, ceil_div(count, chunks));
  std::vector<ChunkFold> plan;
  for (int k = 0; k < chunks; ++k) {
    add_chunk(plan, k * chunk_size, (k + 1) * chunk_size, count,
              gloo_ring_chunked_pair_fold(n, k / 2));
  }
  return plan;
}

// ---- Gloo bcube, base 2 (facts §3.4; gloo/allreduce.cc bcube()). Modelled only for powers of
// two (the balanced butterfly) and for n = 3 (one step over a group of three). Other sizes factor
// into steps of 2 and a remainder (6 -> [2,3], 12 -> [2,2,3]); their order is unverified here and
// they are rejected.

bool bcube_is_modelled(int n) { return std::has_single_bit(static_cast<unsigned>(n)) || n == 3; }

void check_bcube_modelled(int n) {
  if (!bcube_is_modelled(n)) {
    throw Error("gloo_bcube order for group size " + std::to_string(n) +
                " is not modelled, expected a power of two or 3");
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

std::vector<ChunkFold> gloo_bcube_plan(int n, std::int64_t count) {
  check_bcube_modelled(n);
  if (n != 3) return single_chunk(count, butterfly_over_ranks(n));
  const std::int64_t chunk_size = ceil_div(count, 3);
  std::vector<ChunkFold> plan;
  for (int g = 0; g < 3; ++g) {
    add_chunk(plan, g * chunk_size, (g + 1) * chunk_size, count, bcube3_chunk_fold(g));
  }
  return plan;
}

// ---- Open MPI (facts §4.2; ompi/mca/coll/base/coll_base_allreduce.c @v4.1.4).

// Recursive doubling (3) and Rabenseifner (6): the r = n - pof2 extra ranks are folded in pairs
// first, v_k = x_{2k} + x_{2k+1} for k < r, else v_k = x_{k+r}; then the butterfly over v.
FoldTree mpi_recursive_doubling_fold(int n) {
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
FoldTree mpi_linear_fold(int n) { return fold_right_nested(rank_order(n).walk(0, 1)); }

// Ring (4): block b: acc = x_b; acc = x_{b+1} + acc; ...; rank b-1 adds last.
FoldTree mpi_ring_block_fold(int n, std::int64_t block) {
  return fold_new_plus_acc(rank_order(n).walk(block, +1));
}

std::vector<ChunkFold> mpi_ring_plan(int n, std::int64_t count) {
  // "if count < P it falls back to recursive doubling".
  if (count < n) return single_chunk(count, mpi_recursive_doubling_fold(n));
  // The first count % n blocks have ceil(count / n) elements, the rest floor(count / n).
  const std::int64_t early_blocks = count % n;
  const std::int64_t small_size = count / n;
  std::vector<ChunkFold> plan;
  std::int64_t begin = 0;
  for (int b = 0; b < n; ++b) {
    const std::int64_t size = small_size + (b < early_blocks ? 1 : 0);
    add_chunk(plan, begin, begin + size, count, mpi_ring_block_fold(n, b));
    begin += size;
  }
  return plan;
}

std::vector<ChunkFold> mpi_rabenseifner_plan(int n, std::int64_t count) {
  // "Rabenseifner falls back to basic linear if count < pof2".
  const std::int64_t pof2 = static_cast<std::int64_t>(std::bit_floor(static_cast<unsigned>(n)));
  if (count < pof2) return single_chunk(count, mpi_linear_fold(n));
  return single_chunk(count, mpi_recursive_doubling_fold(n));
}

// ---- Heap-ordered binary tree over ring positions: value(i) = (x_i + value(2i+1)) + value(2i+2).

int add_heap_subtree(FoldTree& tree, const Ring& ring, int position) {
  int value = tree.add_leaf(ring.rank_at(position));
  for (int child : {2 * position + 1, 2 * position + 2}) {
    if (child >= ring.size()) break;
    const int subtree = add_heap_subtree(tree, ring, child);
    value = tree.add_op(value, subtree);
  }
  return value;
}

FoldTree binary_tree_fold(const Ring& ring) {
  FoldTree tree;
  add_heap_subtree(tree, ring, 0);
  return tree;
}

// ---- The simulator's own algorithms (collectives/): no library behind them, so their orders
// are definitions, which the schedules in collectives/ must reproduce.

// Recursive halving pairs ranks at distance n/2 first, then n/4, ..., 1, the lower rank's
// partial on the left: w_r = x_r + x_{r+n/2}, then w_r + w_{r+n/4}, ... That is the butterfly
// over the ranks in bit-reversed order.
FoldTree halving_doubling_fold(int n) {
  if (!std::has_single_bit(static_cast<unsigned>(n))) {
    throw Error("halving_doubling order for group size " + std::to_string(n) +
                ", expected a power of two");
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

// Position p of the reversed ring holds ring[(n - p) % n]: the same ring walked the other way.
Ring reversed_ring(const Ring& ring) {
  std::vector<int> ranks;
  for (int p = 0; p < ring.size(); ++p) ranks.push_back(ring.rank_at(-p));
  return Ring(ring.size(), ranks);
}

// Position p of the mirrored ring holds ring[n - 1 - p]: the second tree's root is a leaf of
// the first (NCCL's double binary tree has the same aim).
Ring mirrored_ring(const Ring& ring) {
  std::vector<int> ranks;
  for (int p = 0; p < ring.size(); ++p) ranks.push_back(ring.rank_at(ring.size() - 1 - p));
  return Ring(ring.size(), ranks);
}

// Appends `second` (a plan over its own elements 0..) shifted to start at `offset`.
void append_shifted(std::vector<ChunkFold>& plan, std::vector<ChunkFold> second,
                    std::int64_t offset) {
  for (ChunkFold& chunk : second) {
    chunk.begin += offset;
    chunk.end += offset;
    plan.push_back(std::move(chunk));
  }
}

std::vector<ChunkFold> bidirectional_ring_plan(const Ring& ring, std::int64_t count,
                                               std::int64_t element_bytes,
                                               std::int64_t chunk_bytes) {
  const std::int64_t first = first_half_elements(count);
  std::vector<ChunkFold> plan = nccl_ring_plan(ring, first, element_bytes, chunk_bytes);
  append_shifted(plan, nccl_ring_plan(reversed_ring(ring), count - first, element_bytes,
                                      chunk_bytes),
                 first);
  return plan;
}

std::vector<ChunkFold> double_binary_tree_plan(const Ring& ring, std::int64_t count) {
  const std::int64_t first = first_half_elements(count);
  std::vector<ChunkFold> plan;
  add_chunk(plan, 0, first, count, binary_tree_fold(ring));
  add_chunk(plan, first, count, count, binary_tree_fold(mirrored_ring(ring)));
  return plan;
}

// Torus: the group is a row-major grid over `dims`. Dimensions are reduce-scattered last first:
// along dimension j the current range is split evenly into dims[j] blocks (even_split_begin) and
// block b is reduced as on an NCCL ring along the line, starting at coordinate b + 1 and ending
// at b. An element in blocks (b_0, ..., b_{k-1}) therefore folds as
//   T(prefix) = new_plus_acc over c_j in (b_j + 1, b_j + 2, ..., b_j) of T(prefix + c_j),
// outermost dimension 0, with a leaf at a full coordinate.
class TorusFold {
 public:
  explicit TorusFold(std::vector<int> dims) : dims_(std::move(dims)) {}

  FoldTree fold(const std::vector<int>& blocks) {
    FoldTree tree;
    std::vector<int> coordinates;
    add(tree, blocks, coordinates);
    return tree;
  }

 private:
  int add(FoldTree& tree, const std::vector<int>& blocks, std::vector<int>& coordinates) {
    const std::size_t j = coordinates.size();
    if (j == dims_.size()) {
      int rank = 0;
      for (std::size_t i = 0; i < dims_.size(); ++i) rank = rank * dims_[i] + coordinates[i];
      return tree.add_leaf(rank);
    }
    const int size = dims_[j];
    int acc = -1;
    for (int k = 1; k <= size; ++k) {
      coordinates.push_back(mod(blocks[j] + k, size));
      const int partial = add(tree, blocks, coordinates);
      coordinates.pop_back();
      acc = acc < 0 ? partial : tree.add_op(partial, acc);
    }
    return acc;
  }

  std::vector<int> dims_;
};

// The torus order applies when its dims cover the group exactly; otherwise the simulator runs
// the all-reduce as a ring, and so does this order.
bool torus_dims_fit(const std::vector<int>& dims, int n) {
  std::int64_t product = 1;
  for (int d : dims) {
    if (d < 1) return false;
    product *= d;
  }
  return !dims.empty() && product == n;
}

// Splits [begin, end) level by level (last dimension first) and adds each final block's fold.
void add_torus_chunks(std::vector<ChunkFold>& plan, TorusFold& folds, const std::vector<int>& dims,
                      std::vector<int>& blocks, int level, std::int64_t begin, std::int64_t end) {
  if (level < 0) {
    if (begin < end) plan.push_back(ChunkFold{begin, end, folds.fold(blocks)});
    return;
  }
  const int parts = dims[static_cast<std::size_t>(level)];
  for (int b = 0; b < parts; ++b) {
    blocks[static_cast<std::size_t>(level)] = b;
    add_torus_chunks(plan, folds, dims, blocks, level - 1,
                     begin + even_split_begin(end - begin, parts, b),
                     begin + even_split_begin(end - begin, parts, b + 1));
  }
}

std::vector<ChunkFold> torus_plan(const std::vector<int>& dims, std::int64_t count) {
  TorusFold folds(dims);
  std::vector<int> blocks(dims.size(), 0);
  std::vector<ChunkFold> plan;
  add_torus_chunks(plan, folds, dims, blocks, static_cast<int>(dims.size()) - 1, 0, count);
  return plan;
}


// ---- Checks

void check_group_size(int group_size) {
  if (group_size < 1) {
    throw Error("reduction group size " + std::to_string(group_size) + ", expected >= 1");
  }
}

void check_parameters(const ReductionOrder& order, std::int64_t element_bytes) {
  const bool nccl_chunks = order.algorithm == ReductionAlgorithm::nccl_ring ||
                           order.algorithm == ReductionAlgorithm::bidirectional_ring;
  if (nccl_chunks && order.nccl_chunk_bytes < element_bytes) {
    throw Error("nccl_chunk_bytes " + std::to_string(order.nccl_chunk_bytes) +
                ", expected at least one element (" + std::to_string(element_bytes) + " bytes)");
  }
  if (order.algorithm == ReductionAlgorithm::gloo_ring && order.gloo_max_segment_bytes < 1) {
    throw Error("gloo_max_segment_bytes " + std::to_string(order.gloo_max_segment_bytes) +
                ", expected >= 1");
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ReductionOrder

std::vector<ChunkFold> ReductionOrder::all_reduce_plan(int group_size, std::int64_t count,
                                                       DType dtype) const {
  check_group_size(group_size);
  if (count < 0) throw Error("reduction count " + std::to_string(count) + ", expected >= 0");
  const auto element_bytes = static_cast<std::int64_t>(dtype_size_bytes(dtype));
  check_parameters(*this, element_bytes);
  const Ring ring_order(group_size, ring);
  // A group of one is a plain copy in every backend (XLA: single_replica memcpy keeps -0.0).
  if (group_size == 1) return single_chunk(count, single_leaf());

  const int n = group_size;
  switch (algorithm) {
    case ReductionAlgorithm::xla_cpu:
      return single_chunk(count, xla_cpu_fold(n));
    case ReductionAlgorithm::nccl_ring:
      return nccl_ring_plan(ring_order, count, element_bytes, nccl_chunk_bytes);
    case ReductionAlgorithm::nccl_tree_chain:
      return single_chunk(count, nccl_tree_chain_fold(ring_order));
    case ReductionAlgorithm::gloo_ring:
      return gloo_ring_plan(n, count, element_bytes, gloo_max_segment_bytes);
    case ReductionAlgorithm::gloo_ring_chunked:
      return gloo_ring_chunked_plan(n, count);
    case ReductionAlgorithm::gloo_bcube:
      return gloo_bcube_plan(n, count);
    case ReductionAlgorithm::mpi_ring:
      return mpi_ring_plan(n, count);
    case ReductionAlgorithm::mpi_recursive_doubling:
      return single_chunk(count, mpi_recursive_doubling_fold(n));
    case ReductionAlgorithm::mpi_rabenseifner:
      return mpi_rabenseifner_plan(n, count);
    case ReductionAlgorithm::mpi_linear:
      return single_chunk(count, mpi_linear_fold(n));
    case ReductionAlgorithm::binary_tree:
      return single_chunk(count, binary_tree_fold(ring_order));
    case ReductionAlgorithm::halving_doubling:
      if (!std::has_single_bit(static_cast<unsigned>(n))) {
        return nccl_ring_plan(ring_order, count, element_bytes, nccl_chunk_bytes);
      }
      return single_chunk(count, halving_doubling_fold(n));
    case ReductionAlgorithm::bidirectional_ring:
      return bidirectional_ring_plan(ring_order, count, element_bytes, nccl_chunk_bytes);
    case ReductionAlgorithm::double_binary_tree:
      return double_binary_tree_plan(ring_order, count);
    case ReductionAlgorithm::torus:
      if (!torus_dims_fit(torus_dims, n)) {
        return nccl_ring_plan(ring_order, count, element_bytes, nccl_chunk_bytes);
      }
      return torus_plan(torus_dims, count);
  }
  throw Error("reduction algorithm " + std::to_string(static_cast<int>(algorithm)) +
              " is unknown, expected a ReductionAlgorithm value");
}

// Reduce-scatter folds. For the rings the block owned by `destination` is the chunk whose fold
// ends there: NCCL reduce_scatter.h states this (the block for ring index d starts at d+1 and
// ends at d); for gloo_ring, gloo_ring_chunked and mpi_ring it is the same reading of their
// all-reduce's reduce-scatter phase (a model: their own reduce-scatter collectives are not
// covered by the facts). The other algorithms use their all-reduce fold for every block: exact
// for XLA:CPU (facts §5.1 "Reduce-scatter uses the same fold"), a model for the rest. Count-based
// fallbacks (mpi_ring, mpi_rabenseifner) do not apply: a block fold has no element count.
FoldTree ReductionOrder::reduce_scatter_fold(int group_size, int destination) const {
  check_group_size(group_size);
  if (destination < 0 || destination >= group_size) {
    throw Error("reduce-scatter destination " + std::to_string(destination) +
                ", expected a group rank in 0.." + std::to_string(group_size - 1));
  }
  const Ring ring_order(group_size, ring);
  if (group_size == 1) return single_leaf();

  const int n = group_size;
  const int d = destination;
  switch (algorithm) {
    case ReductionAlgorithm::xla_cpu:
      return xla_cpu_fold(n);
    case ReductionAlgorithm::nccl_ring:
      return nccl_ring_chunk_fold(ring_order, ring_order.position_of(d));
    case ReductionAlgorithm::nccl_tree_chain:
      return nccl_tree_chain_fold(ring_order);
    case ReductionAlgorithm::gloo_ring:
      return gloo_ring_chunk_fold(n, d);
    case ReductionAlgorithm::gloo_ring_chunked:
      return gloo_ring_chunked_pair_fold(n, d + 1);
    case ReductionAlgorithm::gloo_bcube:
      check_bcube_modelled(n);
      return n == 3 ? bcube3_chunk_fold(d) : butterfly_over_ranks(n);
    case ReductionAlgorithm::mpi_ring:
      return mpi_ring_block_fold(n, d + 1);
    case ReductionAlgorithm::mpi_recursive_doubling:
    case ReductionAlgorithm::mpi_rabenseifner:
      return mpi_recursive_doubling_fold(n);
    case ReductionAlgorithm::mpi_linear:
      return mpi_linear_fold(n);
    case ReductionAlgorithm::halving_doubling:
      if (std::has_single_bit(static_cast<unsigned>(n))) return halving_doubling_fold(n);
      return nccl_ring_chunk_fold(ring_order, ring_order.position_of(d));
    // The simulator runs these reduce-scatters as a ring (collectives/: a tree or a two-way ring
    // has no per-block fold).
    case ReductionAlgorithm::binary_tree:
    case ReductionAlgorithm::bidirectional_ring:
    case ReductionAlgorithm::double_binary_tree:
    case ReductionAlgorithm::torus:
      return nccl_ring_chunk_fold(ring_order, ring_order.position_of(d));
  }
  throw Error("reduction algorithm " + std::to_string(static_cast<int>(algorithm)) +
              " is unknown, expected a ReductionAlgorithm value");
}

std::string ReductionOrder::describe() const {
  std::vector<std::string> parameters;
  if (!ring.empty()) parameters.push_back("ring=" + join(ring));
  if (!torus_dims.empty()) parameters.push_back("torus_dims=" + join(torus_dims));
  const ReductionOrder defaults;
  if (algorithm == ReductionAlgorithm::nccl_ring && nccl_chunk_bytes != defaults.nccl_chunk_bytes) {
    parameters.push_back("nccl_chunk_bytes=" + std::to_string(nccl_chunk_bytes));
  }
  if (algorithm == ReductionAlgorithm::gloo_ring &&
      gloo_max_segment_bytes != defaults.gloo_max_segment_bytes) {
    parameters.push_back("gloo_max_segment_bytes=" + std::to_string(gloo_max_segment_bytes));
  }
  std::string text(reduction_algorithm_name(algorithm));
  if (parameters.empty()) return text;
  text += '(';
  for (std::size_t i = 0; i < parameters.size(); ++i) text += (i ? "; " : "") + parameters[i];
  return text + ')';
}

}  // namespace spmd
