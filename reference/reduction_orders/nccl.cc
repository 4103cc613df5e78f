// NCCL: the ring (src/device/all_reduce.h runRing, Simple protocol, one channel) and the tree
// within one node, which is a chain (connect.cc ncclTopoPreset). Read from source, not run; see
// docs/reduction-orders.md. Also in_switch, NCCL's NVLS and in-network (CollNet) reductions,
// whose order the switch fixes and no source shows: folded as the ring.

#include "reference/nccl_ring_loops.h"
#include "reference/reduction_orders/chunk_plans.h"
#include "reference/reduction_orders/order_parts.h"

namespace spmd::reduction_orders {

// Step 0 at ring index i sends chunk i-1, so chunk c starts at ring index c+1; each later step
// computes local + received (prims_simple.h: srcs[0] is the local input), and ring index c adds
// last.
FoldTree nccl_ring_chunk_fold(const RingOrder& ring, std::int64_t chunk) {
  return fold_new_plus_acc(ring.walk(chunk + 1, +1));
}

std::vector<ChunkFold> nccl_ring_plan(const RingOrder& ring, std::int64_t count,
                                      std::int64_t element_bytes, std::int64_t chunk_bytes) {
  const int n = ring.size();
  std::vector<FoldTree> chunk_folds;
  for (int c = 0; c < n; ++c) chunk_folds.push_back(nccl_ring_chunk_fold(ring, c));
  std::vector<ChunkFold> plan;
  for (const auto& chunks : nccl_ring_loops(count, n, element_bytes, chunk_bytes)) {
    for (int c = 0; c < n; ++c) {
      const auto [begin, end] = chunks[static_cast<std::size_t>(c)];
      add_chunk(plan, begin, end, count, chunk_folds[static_cast<std::size_t>(c)]);
    }
  }
  return plan;
}

namespace {

std::vector<ChunkFold> ring_plan(const ReductionOrder& order, const RingOrder& ring,
                                 std::int64_t count, std::int64_t element_bytes) {
  return nccl_ring_plan(ring, count, element_bytes, order.nccl_chunk_bytes);
}

// reduce_scatter.h: the block for ring index d starts at d+1 and ends at d, the same fold as the
// all-reduce's chunk d.
FoldTree ring_reduce_scatter_fold(const ReductionOrder&, const RingOrder& ring, int destination) {
  return nccl_ring_chunk_fold(ring, ring.position_of(destination));
}

// The chain's last member starts: acc = x[t[n-1]]; acc = x[t[k]] + acc for k = n-2..0.
FoldTree tree_chain_fold(const RingOrder& chain) { return fold_right_nested(chain.walk(0, 1)); }

std::vector<ChunkFold> tree_chain_plan(const ReductionOrder&, const RingOrder& chain,
                                       std::int64_t count, std::int64_t) {
  return single_chunk(count, tree_chain_fold(chain));
}

// A model: every block folds as the all-reduce does.
FoldTree tree_chain_reduce_scatter_fold(const ReductionOrder&, const RingOrder& chain, int) {
  return tree_chain_fold(chain);
}

}  // namespace

const OrderParts& nccl_ring_parts() {
  static const OrderParts parts{ring_plan, ring_reduce_scatter_fold};
  return parts;
}

// The switch adds in an order nobody documents; the ring is one it may use. Conformance checks
// in_switch's bits only where every order gives the same (docs/reduction-orders.md, "In-switch
// reductions"), so which order stands in here does not show in any result it checks.
const OrderParts& in_switch_parts() { return nccl_ring_parts(); }

const OrderParts& nccl_tree_chain_parts() {
  static const OrderParts parts{tree_chain_plan, tree_chain_reduce_scatter_fold};
  return parts;
}

}  // namespace spmd::reduction_orders
