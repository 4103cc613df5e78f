// ReductionOrder: the checks every order shares, then a table with one entry per
// ReductionAlgorithm (its name and its parts, defined under reference/reduction_orders/ with the
// other orders of its library). Each order follows docs/reduction-orders.md; indices are taken
// mod n throughout.

#include "reference/reduction_order.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reference/error.h"
#include "reference/reduction_orders/chunk_plans.h"
#include "reference/reduction_orders/order_parts.h"
#include "reference/ring_order.h"

namespace spmd {
namespace {

using reduction_orders::OrderParts;

struct OrderEntry {
  ReductionAlgorithm algorithm;
  std::string_view name;
  const OrderParts& (*parts)();
};

constexpr OrderEntry kOrders[] = {
    {ReductionAlgorithm::xla_cpu, "xla_cpu", reduction_orders::xla_cpu_parts},
    {ReductionAlgorithm::nccl_ring, "nccl_ring", reduction_orders::nccl_ring_parts},
    {ReductionAlgorithm::nccl_tree_chain, "nccl_tree_chain",
     reduction_orders::nccl_tree_chain_parts},
    {ReductionAlgorithm::gloo_ring, "gloo_ring", reduction_orders::gloo_ring_parts},
    {ReductionAlgorithm::gloo_ring_chunked, "gloo_ring_chunked",
     reduction_orders::gloo_ring_chunked_parts},
    {ReductionAlgorithm::gloo_bcube, "gloo_bcube", reduction_orders::gloo_bcube_parts},
    {ReductionAlgorithm::mpi_ring, "mpi_ring", reduction_orders::mpi_ring_parts},
    {ReductionAlgorithm::mpi_recursive_doubling, "mpi_recursive_doubling",
     reduction_orders::mpi_recursive_doubling_parts},
    {ReductionAlgorithm::mpi_rabenseifner, "mpi_rabenseifner",
     reduction_orders::mpi_rabenseifner_parts},
    {ReductionAlgorithm::mpi_linear, "mpi_linear", reduction_orders::mpi_linear_parts},
    {ReductionAlgorithm::binary_tree, "binary_tree", reduction_orders::binary_tree_parts},
    {ReductionAlgorithm::halving_doubling, "halving_doubling",
     reduction_orders::halving_doubling_parts},
    {ReductionAlgorithm::bidirectional_ring, "bidirectional_ring",
     reduction_orders::bidirectional_ring_parts},
    {ReductionAlgorithm::double_binary_tree, "double_binary_tree",
     reduction_orders::double_binary_tree_parts},
    {ReductionAlgorithm::torus, "torus", reduction_orders::torus_parts},
    {ReductionAlgorithm::bidirectional_torus, "bidirectional_torus",
     reduction_orders::bidirectional_torus_parts},
    {ReductionAlgorithm::in_switch, "in_switch", reduction_orders::in_switch_parts},
};

const OrderEntry* find_entry(ReductionAlgorithm algorithm) {
  for (const OrderEntry& entry : kOrders) {
    if (entry.algorithm == algorithm) return &entry;
  }
  return nullptr;
}

const OrderParts& parts_of(ReductionAlgorithm algorithm) {
  const OrderEntry* entry = find_entry(algorithm);
  if (entry == nullptr) {
    throw Error(
        fmt::format("reduction algorithm {} is unknown, expected a ReductionAlgorithm value",
                    static_cast<int>(algorithm)));
  }
  return entry->parts();
}

// A group of one: XLA:CPU folds its member onto the identity like any other group (found by
// running JAX, docs/jax-differences.md); NCCL, Gloo and Open MPI copy it.
FoldTree group_of_one_fold(ReductionAlgorithm algorithm) {
  if (algorithm == ReductionAlgorithm::xla_cpu) return fold_from_identity({0});
  FoldTree tree;
  tree.add_leaf(0);
  return tree;
}

void check_group_size(int group_size) {
  if (group_size < 1) {
    throw Error(fmt::format("reduction group size {}, expected >= 1", group_size));
  }
}

// A reduce-scatter's block owner: a group rank.
void check_destination(int group_size, int destination) {
  check_group_size(group_size);
  if (destination < 0 || destination >= group_size) {
    throw Error(fmt::format("reduce-scatter destination {}, expected a group rank in 0..{}",
                            destination, group_size - 1));
  }
}

void check_parameters(const ReductionOrder& order, std::int64_t element_bytes) {
  const bool nccl_chunks = order.algorithm == ReductionAlgorithm::nccl_ring ||
                           order.algorithm == ReductionAlgorithm::bidirectional_ring ||
                           order.algorithm == ReductionAlgorithm::in_switch;
  if (nccl_chunks && order.nccl_chunk_bytes < element_bytes) {
    throw Error(fmt::format("nccl_chunk_bytes {}, expected at least one element ({} bytes)",
                            order.nccl_chunk_bytes, element_bytes));
  }
  if (order.algorithm == ReductionAlgorithm::gloo_ring && order.gloo_max_segment_bytes < 1) {
    throw Error(
        fmt::format("gloo_max_segment_bytes {}, expected >= 1", order.gloo_max_segment_bytes));
  }
}

}  // namespace

std::string_view reduction_algorithm_name(ReductionAlgorithm algorithm) {
  const OrderEntry* entry = find_entry(algorithm);
  if (entry == nullptr) {
    throw Error(
        fmt::format("reduction algorithm {} has no name, expected a ReductionAlgorithm value",
                    static_cast<int>(algorithm)));
  }
  return entry->name;
}

ReductionAlgorithm reduction_algorithm_from_name(std::string_view name) {
  std::vector<std::string_view> valid;
  for (const OrderEntry& entry : kOrders) {
    if (entry.name == name) return entry.algorithm;
    valid.push_back(entry.name);
  }
  throw Error(fmt::format("reduction algorithm '{}' is unknown, expected one of: {}", name,
                          fmt::join(valid, ", ")));
}

std::vector<ChunkFold> ReductionOrder::all_reduce_plan(int group_size, std::int64_t count,
                                                       DType dtype) const {
  check_group_size(group_size);
  if (count < 0) throw Error(fmt::format("reduction count {}, expected >= 0", count));
  const auto element_bytes = static_cast<std::int64_t>(dtype_size_bytes(dtype));
  check_parameters(*this, element_bytes);
  const RingOrder ring_order(ring, group_size);
  if (group_size == 1) {
    return reduction_orders::single_chunk(count, group_of_one_fold(algorithm));
  }
  return parts_of(algorithm).all_reduce_plan(*this, ring_order, count, element_bytes);
}

// For the rings the block owned by `destination` is the chunk whose fold ends there; the other
// algorithms use their all-reduce fold for every block: exact for XLA:CPU, a model for the rest
// (docs/reduction-orders.md, "Reduce-scatter").
FoldTree ReductionOrder::reduce_scatter_fold(int group_size, int destination) const {
  check_destination(group_size, destination);
  const RingOrder ring_order(ring, group_size);
  if (group_size == 1) return group_of_one_fold(algorithm);
  return parts_of(algorithm).reduce_scatter_fold(*this, ring_order, destination);
}

std::vector<ChunkFold> ReductionOrder::reduce_scatter_plan(int group_size, int destination,
                                                           std::int64_t count) const {
  check_destination(group_size, destination);
  if (count < 0)
    throw Error(fmt::format("reduce-scatter block of {} elements, expected >= 0", count));
  const auto plan = parts_of(algorithm).reduce_scatter_plan;
  if (group_size == 1 || plan == nullptr) {
    return reduction_orders::single_chunk(count, reduce_scatter_fold(group_size, destination));
  }
  return plan(*this, RingOrder(ring, group_size), destination, count);
}

void ReductionOrder::check_device_ring(int device_count) const {
  if (ring.empty()) return;
  try {
    static_cast<void>(RingOrder(ring, device_count));  // throws unless a permutation of 0..n-1
  } catch (const Error&) {
    throw Error(
        fmt::format("ring {} for {} devices, expected a permutation of the device ids 0..{}",
                    fmt::join(ring, ","), device_count, device_count - 1));
  }
}

ReductionOrder ReductionOrder::for_group(std::span<const int> group_devices) const {
  ReductionOrder group_order = *this;
  if (ring.empty()) return group_order;
  group_order.ring = group_ring(ring, group_devices);
  if (group_order.ring.size() != group_devices.size()) {
    throw Error(fmt::format(
        "ring {} does not visit each device of the group {} once, expected a permutation of the "
        "mesh's device ids",
        fmt::join(ring, ","), fmt::join(group_devices, ",")));
  }
  return group_order;
}

std::string ReductionOrder::describe() const {
  std::vector<std::string> parameters;
  if (!ring.empty()) parameters.push_back(fmt::format("ring={}", fmt::join(ring, ",")));
  if (!torus_dims.empty()) {
    parameters.push_back(fmt::format("torus_dims={}", fmt::join(torus_dims, ",")));
  }
  const ReductionOrder defaults;
  if (algorithm == ReductionAlgorithm::nccl_ring && nccl_chunk_bytes != defaults.nccl_chunk_bytes) {
    parameters.push_back(fmt::format("nccl_chunk_bytes={}", nccl_chunk_bytes));
  }
  if (algorithm == ReductionAlgorithm::gloo_ring &&
      gloo_max_segment_bytes != defaults.gloo_max_segment_bytes) {
    parameters.push_back(fmt::format("gloo_max_segment_bytes={}", gloo_max_segment_bytes));
  }
  const std::string_view name = reduction_algorithm_name(algorithm);
  if (parameters.empty()) return std::string(name);
  return fmt::format("{}({})", name, fmt::join(parameters, "; "));
}

}  // namespace spmd
