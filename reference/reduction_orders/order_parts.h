#pragma once
// Inside reference/: each ReductionAlgorithm's plan and reduce-scatter fold, defined with the
// other orders of its library (xla_cpu.cc, nccl.cc with in_switch, gloo.cc, open_mpi.cc,
// simulator.cc) and dispatched by reference/reduction_order.cc, which has already checked the group
// size, the ring and the parameters, and handled a group of one.

#include <cstdint>
#include <vector>

#include "reference/reduction_order.h"
#include "reference/ring_order.h"

namespace spmd::reduction_orders {

struct OrderParts {
  // The all-reduce of `count` elements of `element_bytes` each over the group of ring.size()
  // ranks (at least two): ReductionOrder::all_reduce_plan.
  std::vector<ChunkFold> (*all_reduce_plan)(const ReductionOrder& order, const RingOrder& ring,
                                            std::int64_t count, std::int64_t element_bytes);
  // The fold of the reduce-scatter block owned by group rank `destination`:
  // ReductionOrder::reduce_scatter_fold.
  FoldTree (*reduce_scatter_fold)(const ReductionOrder& order, const RingOrder& ring,
                                  int destination);
  // Where one block folds in pieces (the bidirectional torus): the chunks of the `count`
  // elements of the block owned by `destination`, ReductionOrder::reduce_scatter_plan. Null: the
  // whole block folds by reduce_scatter_fold.
  std::vector<ChunkFold> (*reduce_scatter_plan)(const ReductionOrder& order, const RingOrder& ring,
                                                int destination, std::int64_t count) = nullptr;
};

const OrderParts& xla_cpu_parts();
const OrderParts& nccl_ring_parts();
const OrderParts& nccl_tree_chain_parts();
const OrderParts& gloo_ring_parts();
const OrderParts& gloo_ring_chunked_parts();
const OrderParts& gloo_bcube_parts();
const OrderParts& mpi_ring_parts();
const OrderParts& mpi_recursive_doubling_parts();
const OrderParts& mpi_rabenseifner_parts();
const OrderParts& mpi_linear_parts();
const OrderParts& binary_tree_parts();
const OrderParts& halving_doubling_parts();
const OrderParts& bidirectional_ring_parts();
const OrderParts& double_binary_tree_parts();
const OrderParts& torus_parts();
const OrderParts& bidirectional_torus_parts();
const OrderParts& in_switch_parts();

// The group ranks in ring form, for the orders whose ranks are the group ranks (XLA:CPU, Gloo,
// Open MPI).
inline RingOrder rank_order(int group_size) { return RingOrder({}, group_size); }

// NCCL's ring, which the simulator's algorithms also fold as where they run a ring (nccl.cc).
FoldTree nccl_ring_chunk_fold(const RingOrder& ring, std::int64_t chunk);
std::vector<ChunkFold> nccl_ring_plan(const RingOrder& ring, std::int64_t count,
                                      std::int64_t element_bytes, std::int64_t chunk_bytes);

}  // namespace spmd::reduction_orders
