#pragma once
// The collectives of spmd::Array on a Gloo context, one Gloo call each: the group is the context
// and a device's group rank is its Gloo rank. Arrays are 1-D; blocks are contiguous ranges of
// elements in rank order (JAX's tiled collectives on axis 0).

#include <gloo/context.h>

#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/gloo/gloo_ranks.h"
#include "reference/array.h"
#include "reference/fold_reduce.h"
#include "reference/reduction_order.h"

namespace spmd::gloo_backend {

// The Gloo all-reduce algorithms with a known order (docs/reduction-orders.md#all-reduce-orders).
enum class AllReduceAlgorithm {
  ring,          // gloo::allreduce, AllreduceOptions::Algorithm::RING (the default)
  ring_chunked,  // gloo::AllreduceRingChunked<T>
  bcube,         // gloo::allreduce, AllreduceOptions::Algorithm::BCUBE
};
std::string_view all_reduce_algorithm_name(AllReduceAlgorithm algorithm);  // "ring", ...
// The reference order each one folds a sum in (gloo_ring, gloo_ring_chunked, gloo_bcube).
ReductionAlgorithm reduction_order_of(AllReduceAlgorithm algorithm);

// `op` over all ranks; every rank gets the result. Every dtype: Gloo combines elements with the
// reference's arithmetic (reference/combine_elements.h) as its reduce function.
Array all_reduce(const ContextPtr& context, const Array& x, AllReduceAlgorithm algorithm,
                 ReduceOp op = ReduceOp::sum);
// gloo::allgather: every rank's x, concatenated in rank order.
Array all_gather(const ContextPtr& context, const Array& x);
// gloo::alltoall: rank r gets block r of every rank's x, concatenated in rank order.
Array all_to_all(const ContextPtr& context, const Array& x);
// gloo::broadcast: every rank gets the root's x.
Array broadcast(const ContextPtr& context, const Array& x, int root);
// Point-to-point (unbound buffers): for each (source, destination) pair the destination gets
// the source's x; ranks that are no destination get zeros, as in jax.lax.ppermute.
Array permute(const ContextPtr& context, const Array& x,
              const std::vector<std::pair<int, int>>& pairs);

}  // namespace spmd::gloo_backend
