// XLA:CPU's in-process collectives (in_process_communicator.cc): out = identity; out += in_j in
// rank order. Reduce-scatter uses the same fold for every block (XLA's ReduceScatterOp). See
// docs/reduction-orders.md.

#include "reference/reduction_orders/chunk_plans.h"
#include "reference/reduction_orders/order_parts.h"

namespace spmd::reduction_orders {
namespace {

FoldTree xla_cpu_fold(int group_size) {
  return fold_from_identity(rank_order(group_size).walk(0, 1));
}

std::vector<ChunkFold> plan(const ReductionOrder&, const RingOrder& ring, std::int64_t count,
                            std::int64_t) {
  return single_chunk(count, xla_cpu_fold(ring.size()));
}

FoldTree reduce_scatter_fold(const ReductionOrder&, const RingOrder& ring, int) {
  return xla_cpu_fold(ring.size());
}

}  // namespace

const OrderParts& xla_cpu_parts() {
  static const OrderParts parts{plan, reduce_scatter_fold};
  return parts;
}

}  // namespace spmd::reduction_orders
