#include "backends/gloo/gloo_backend.h"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "backends/backend_registry.h"
#include "backends/gloo/gloo_collectives.h"
#include "backends/gloo/gloo_ranks.h"
#include "backends/library_backend.h"
#include "backends/reduce_scatter_placement.h"
#include "reference/error.h"

namespace spmd {
namespace {

using gloo_backend::AllReduceAlgorithm;
using gloo_backend::ContextPtr;

AllReduceAlgorithm gloo_algorithm_for(const ReductionOrder& order) {
  for (AllReduceAlgorithm algorithm :
       {AllReduceAlgorithm::ring, AllReduceAlgorithm::ring_chunked, AllReduceAlgorithm::bcube}) {
    if (gloo_backend::reduction_order_of(algorithm) == order.algorithm) return algorithm;
  }
  throw Error(fmt::format(
      "--order {} with --backend gloo, expected gloo_ring, gloo_ring_chunked or gloo_bcube",
      reduction_algorithm_name(order.algorithm)));
}

// Connected contexts by group size, made on a size's first operation and kept for the process's
// life. Connecting a TCP full mesh takes far longer than a conformance case's collective, and
// Gloo's ranks are the group's ranks, so every group of n devices can share one set of n
// contexts. Never destroyed: tearing contexts down while static objects die, in no set order,
// could break a peer's connection mid-teardown.
struct ContextPool {
  std::mutex mutex;
  std::map<int, std::vector<ContextPtr>> by_ranks;
};

ContextPool& context_pool() {
  static ContextPool* pool = new ContextPool;
  return *pool;
}

// Each operation runs the group's ranks on their threads and gives rank r the buffer
// group.inputs[r].
class GlooGroupCollectives : public GroupCollectives {
 public:
  explicit GlooGroupCollectives(const ReductionOrder& order)
      : order_(order), algorithm_(gloo_algorithm_for(order)) {}

  std::vector<Array> all_reduce(const GroupBuffers& group, ReduceOp op) override {
    return on_ranks(group, [&](const ContextPtr& context, const Array& own) {
      return gloo_backend::all_reduce(context, own, algorithm_, op);
    });
  }
  std::vector<Array> all_gather(const GroupBuffers& group) override {
    return on_ranks(group, [](const ContextPtr& context, const Array& own) {
      return gloo_backend::all_gather(context, own);
    });
  }
  std::vector<Array> reduce_scatter(const GroupBuffers& group, ReduceOp op) override;
  std::vector<Array> all_to_all(const GroupBuffers& group) override {
    return on_ranks(group, [](const ContextPtr& context, const Array& own) {
      return gloo_backend::all_to_all(context, own);
    });
  }
  std::vector<Array> permute(const GroupBuffers& group,
                             const std::vector<std::pair<int, int>>& pairs) override {
    return on_ranks(group, [&](const ContextPtr& context, const Array& own) {
      return gloo_backend::permute(context, own, pairs);
    });
  }

 private:
  template <typename RankCall>
  static std::vector<Array> on_ranks(const GroupBuffers& group, RankCall call) {
    std::vector<Array> results(group.inputs.size());
    ContextPool& pool = context_pool();
    const std::lock_guard lock(pool.mutex);  // one operation at a time on a set of contexts
    auto [found, made] = pool.by_ranks.try_emplace(group.size());
    if (made) found->second = gloo_backend::connect_gloo_ranks(group.size());
    try {
      gloo_backend::run_on_gloo_contexts(found->second, [&](const ContextPtr& context) {
        const auto rank = static_cast<std::size_t>(context->rank);
        results[rank] = call(context, group.inputs[rank]);
      });
    } catch (...) {
      pool.by_ranks.erase(found);  // contexts an operation failed on are not used again
      throw;
    }
    return results;
  }

  ReductionOrder order_;
  AllReduceAlgorithm algorithm_;
};

std::vector<Array> GlooGroupCollectives::reduce_scatter(const GroupBuffers& group, ReduceOp op) {
  const int n = group.size();
  const Array& first = group.inputs.front();
  const std::int64_t block = first.size() / n;
  const auto placement =
      reduce_scatter_placement(order_.for_group(group.devices), n, block, first.dtype());
  if (!placement) {
    throw Error(fmt::format(
        "psum_scatter on Gloo over {} ranks in {} order: no padding of its {}-element blocks "
        "makes the all-reduce's chunks fold as the order's reduce-scatter, expected an order "
        "whose reduce-scatter is a phase of its all-reduce",
        n, order_.describe(), block));
  }
  std::vector<Array> buffers;
  for (const Array& input : group.inputs) {
    Array buffer(input.dtype(), {placement->buffer_elements});
    for (int d = 0; d < n; ++d) {
      const Array source = slice(input, 0, d * block, (d + 1) * block);
      const std::size_t bytes = source.size_bytes();
      const std::size_t offset =
          static_cast<std::size_t>(placement->block_offsets[static_cast<std::size_t>(d)]) *
          dtype_size_bytes(input.dtype());
      std::copy_n(source.bytes().data(), bytes, buffer.mutable_bytes().data() + offset);
    }
    buffers.push_back(std::move(buffer));
  }
  std::vector<Array> reduced = all_reduce(GroupBuffers{group.devices, buffers}, op);
  for (int r = 0; r < n; ++r) {
    const std::int64_t offset = placement->block_offsets[static_cast<std::size_t>(r)];
    reduced[static_cast<std::size_t>(r)] =
        slice(reduced[static_cast<std::size_t>(r)], 0, offset, offset + block);
  }
  return reduced;
}

}  // namespace

std::unique_ptr<Backend> make_gloo_backend(const ReductionOrder& order, int device_count) {
  if (!order.ring.empty()) {
    throw Error("--ring with --backend gloo: Gloo's ranks are the group's ranks, expected no --ring");
  }
  return std::make_unique<LibraryBackend>("gloo", device_count,
                                          std::make_shared<GlooGroupCollectives>(order),
                                          order.numerics());
}

void register_gloo_backend() {
  register_backend("gloo", make_gloo_backend,
                   ReductionOrder{.algorithm = ReductionAlgorithm::gloo_ring});
}

}  // namespace spmd
