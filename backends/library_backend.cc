#include "backends/library_backend.h"

#include "reference/check.h"
#include "reference/collective_groups.h"
#include "reference/collective_semantics.h"
#include "reference/device_threads.h"
#include "reference/elementwise.h"
#include "reference/reduction_dtype.h"
#include "reference/rendezvous.h"

namespace spmd {
namespace {

Array flattened(const Array& array) { return array.with_shape({array.size()}); }

// One member's buffer: `pieces` flattened and laid end to end, piece k as block k.
Array packed(const std::vector<Array>& pieces) {
  std::vector<Array> flat_pieces;
  flat_pieces.reserve(pieces.size());
  for (const Array& piece : pieces) flat_pieces.push_back(flattened(piece));
  return concatenate(flat_pieces, 0);
}

// The inverse of packed: `parts` equal blocks of `buffer`, each given `piece_shape`.
std::vector<Array> unpacked(const Array& buffer, int parts, const Shape& piece_shape) {
  const std::int64_t block = element_count(piece_shape);
  std::vector<Array> pieces;
  pieces.reserve(static_cast<std::size_t>(parts));
  for (int k = 0; k < parts; ++k) {
    pieces.push_back(reshape(slice(buffer, 0, k * block, (k + 1) * block), piece_shape));
  }
  return pieces;
}

// One collective over one group: the members' device ids and inputs in rank order.
struct Group {
  GroupCollectives& library;
  const CollectiveCall& call;
  std::vector<int> devices;
  std::vector<Array> inputs;
  int size() const { return static_cast<int>(devices.size()); }
};

// Calls the library on the members' buffers; an empty buffer has nothing to move, and its
// results are empty buffers too (no library is asked to move zero elements).
template <typename Operation>
std::vector<Array> on_library(const Group& group, const std::vector<Array>& buffers,
                              Operation operation) {
  if (buffers.front().size() == 0) return buffers;
  return operation(GroupBuffers{group.devices, buffers});
}

std::vector<Array> reduced(const Group& group, std::vector<Array> contributions, ReduceOp op) {
  const Shape shape = contributions.front().shape();
  for (Array& contribution : contributions) contribution = flattened(contribution);
  std::vector<Array> results = on_library(group, contributions, [&](const GroupBuffers& buffers) {
    return group.library.all_reduce(buffers, op);
  });
  for (Array& result : results) result = result.with_shape(shape);
  return results;
}

// psum and pmean sum bool as int32, as JAX converts it first.
std::vector<Array> summed(const Group& group) {
  const DType dtype = reduction_dtype(CollectiveOp::psum, group.inputs.front().dtype());
  std::vector<Array> contributions = group.inputs;
  for (Array& contribution : contributions) contribution = convert(contribution, dtype);
  return reduced(group, std::move(contributions), ReduceOp::sum);
}

std::vector<Array> gathered(const Group& group) {
  const Array& first = group.inputs.front();
  std::vector<Array> buffers;
  for (const Array& input : group.inputs) buffers.push_back(flattened(input));
  std::vector<Array> results = on_library(
      group, buffers, [&](const GroupBuffers& b) { return group.library.all_gather(b); });
  for (Array& result : results) {
    const std::vector<Array> pieces = unpacked(result, group.size(), first.shape());
    result = group.call.tiled ? concatenate(pieces, normalize_axis(group.call.axis, first.rank(),
                                                                   "all_gather axis"))
                              : stack(pieces, normalize_axis(group.call.axis, first.rank() + 1,
                                                             "all_gather axis"));
  }
  return results;
}

// The blocks a member sends to each rank along `axis`: slices when tiled, else index k.
std::vector<Array> blocks_along(const Array& input, int axis, int parts, bool tiled) {
  const std::int64_t block = input.dim(axis) / parts;
  std::vector<Array> blocks;
  for (int k = 0; k < parts; ++k) {
    blocks.push_back(tiled ? slice(input, axis, k * block, (k + 1) * block)
                           : take(input, axis, k));
  }
  return blocks;
}

std::vector<Array> scattered(const Group& group) {
  const Array& first = group.inputs.front();
  const int axis = normalize_axis(group.call.axis, first.rank(), "psum_scatter scatter_dimension");
  std::vector<Array> buffers;
  for (const Array& input : group.inputs) {
    buffers.push_back(packed(blocks_along(input, axis, group.size(), /*tiled=*/true)));
  }
  const ReduceOp op = reduction_op(CollectiveOp::psum_scatter, first.dtype());
  std::vector<Array> results = on_library(
      group, buffers, [&](const GroupBuffers& b) { return group.library.reduce_scatter(b, op); });
  Shape block_shape = first.shape();
  block_shape[static_cast<std::size_t>(axis)] /= group.size();
  for (Array& result : results) {
    result = result.with_shape(block_shape);
    if (!group.call.tiled) result = squeeze(result, axis);
  }
  return results;
}

std::vector<Array> exchanged(const Group& group) {
  const Array& first = group.inputs.front();
  const int split = normalize_axis(group.call.split_axis, first.rank(), "all_to_all split_axis");
  const int concat = normalize_axis(group.call.concat_axis, first.rank(), "all_to_all concat_axis");
  std::vector<Array> buffers;
  for (const Array& input : group.inputs) {
    buffers.push_back(packed(blocks_along(input, split, group.size(), group.call.tiled)));
  }
  const Shape piece_shape = blocks_along(first, split, group.size(), group.call.tiled)[0].shape();
  std::vector<Array> results = on_library(
      group, buffers, [&](const GroupBuffers& b) { return group.library.all_to_all(b); });
  for (Array& result : results) {
    const std::vector<Array> pieces = unpacked(result, group.size(), piece_shape);
    result = group.call.tiled ? concatenate(pieces, concat) : stack(pieces, concat);
  }
  return results;
}

// ppermute's pairs and pshuffle's perm as (source, destination) ranks in 0..n-1 (ppermute
// counts negative indices from the end, as JAX 0.10.2 does; validate_perm checked them).
std::vector<std::pair<int, int>> permute_pairs(const CollectiveCall& call, int n) {
  std::vector<std::pair<int, int>> pairs;
  if (call.op == CollectiveOp::ppermute) {
    for (auto [source, destination] : call.perm) {
      pairs.emplace_back((source + n) % n, (destination + n) % n);
    }
  } else {
    for (std::size_t i = 0; i < call.shuffle.size(); ++i) {
      pairs.emplace_back(call.shuffle[i], static_cast<int>(i));
    }
  }
  return pairs;
}

std::vector<Array> permuted(const Group& group) {
  const Shape shape = group.inputs.front().shape();
  std::vector<Array> buffers;
  for (const Array& input : group.inputs) buffers.push_back(flattened(input));
  const auto pairs = permute_pairs(group.call, group.size());
  std::vector<Array> results = on_library(
      group, buffers, [&](const GroupBuffers& b) { return group.library.permute(b, pairs); });
  for (Array& result : results) result = result.with_shape(shape);
  return results;
}

std::vector<Array> evaluate_group(const Group& group, int axis_size,
                                  const FloatNumerics& numerics) {
  switch (group.call.op) {
    case CollectiveOp::psum: return summed(group);
    case CollectiveOp::pmean: {
      std::vector<Array> results = summed(group);
      for (Array& result : results) result = pmean_from_sum(result, axis_size, numerics);
      return results;
    }
    case CollectiveOp::pmax: return reduced(group, group.inputs, ReduceOp::max);
    case CollectiveOp::pmin: return reduced(group, group.inputs, ReduceOp::min);
    case CollectiveOp::all_gather: return gathered(group);
    case CollectiveOp::psum_scatter: return scattered(group);
    case CollectiveOp::all_to_all: return exchanged(group);
    case CollectiveOp::ppermute:
    case CollectiveOp::pshuffle: return permuted(group);
    case CollectiveOp::axis_index: break;
  }
  throw InternalError("evaluate_with_library: axis_index is computed locally, not by a library");
}

}  // namespace

std::vector<Array> evaluate_with_library(GroupCollectives& library, const CollectiveCall& call,
                                         const Mesh& mesh, const std::vector<Array>& inputs,
                                         const FloatNumerics& numerics) {
  const int axis_size = collective_axis_size(mesh, call);
  std::vector<Array> results(inputs.size());
  for (const std::vector<int>& devices : collective_groups(mesh, call)) {
    Group group{.library = library, .call = call, .devices = devices, .inputs = {}};
    for (int device : devices) group.inputs.push_back(inputs[static_cast<std::size_t>(device)]);
    std::vector<Array> group_results = evaluate_group(group, axis_size, numerics);
    if (group_results.size() != devices.size()) {
      throw InternalError("evaluate_with_library: the library returned " +
                          std::to_string(group_results.size()) + " results for a group of " +
                          std::to_string(devices.size()));
    }
    for (std::size_t r = 0; r < devices.size(); ++r) {
      results[static_cast<std::size_t>(devices[r])] = std::move(group_results[r]);
    }
  }
  return results;
}

std::vector<Values> LibraryBackend::run(const Mesh& mesh, const std::vector<Values>& inputs,
                                        const DeviceFunction& function, bool check_vma) {
  Rendezvous rendezvous(mesh, [&](const CollectiveCall& call, const std::vector<Array>& all) {
    return evaluate_with_library(*library_, call, mesh, all, numerics_);
  });
  return run_devices_on_threads(name_, mesh, inputs, function, check_vma, rendezvous, numerics_);
}

}  // namespace spmd
