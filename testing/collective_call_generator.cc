#include "testing/collective_call_generator.h"

#include <algorithm>
#include <string>

#include "testing/generators.h"

namespace spmd::testkit {
namespace {

// The collectives JAX 0.12 refuses under check_vma over axes the operand varies over only in
// part (pmax / pmin since 0.12; docs/jax-differences.md).
bool refuses_partly_varying(CollectiveOp op) {
  return op == CollectiveOp::psum || op == CollectiveOp::pmean ||
         op == CollectiveOp::psum_scatter || op == CollectiveOp::pmax || op == CollectiveOp::pmin;
}

// psum_scatter and all_to_all split a dimension of the operand into one block per group member.
bool splits_a_dimension(CollectiveOp op) {
  return op == CollectiveOp::psum_scatter || op == CollectiveOp::all_to_all;
}

// Whether JAX takes axis_index_groups for `op` (not the permutes and axis_index; psum and pmean
// not under check_vma, where JAX has not implemented them).
bool takes_groups(CollectiveOp op, bool check_vma) {
  switch (op) {
    case CollectiveOp::psum:
    case CollectiveOp::pmean: return !check_vma;
    case CollectiveOp::pmax:
    case CollectiveOp::pmin:
    case CollectiveOp::all_gather:
    case CollectiveOp::psum_scatter:
    case CollectiveOp::all_to_all: return true;
    default: return false;
  }
}

// The dimensions of `shape` that split into `n` equal blocks.
std::vector<int> dimensions_divisible_by(const Shape& shape, std::int64_t n) {
  std::vector<int> dimensions;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] % n == 0) dimensions.push_back(static_cast<int>(d));
  }
  return dimensions;
}

std::vector<int> divisors(int n) {
  std::vector<int> result;
  for (int k = 1; k <= n; ++k) {
    if (n % k == 0) result.push_back(k);
  }
  return result;
}

// The non-empty sets of mesh axes (in mesh order) a call of `op` may name: under check_vma a
// reduction names axes the operand varies over all or none of.
std::vector<std::vector<std::string>> axis_sets(const Mesh& mesh, const Operand& operand,
                                                CollectiveOp op, bool check_vma) {
  std::vector<std::vector<std::string>> sets;
  const unsigned all = (1u << mesh.axis_count()) - 1;
  for (unsigned mask = 1; mask <= all; ++mask) {
    const unsigned varying = mask & static_cast<unsigned>(operand.varying);
    if (check_vma && refuses_partly_varying(op) && varying != 0 && varying != mask) continue;
    std::vector<std::string> names;
    for (int k = 0; k < mesh.axis_count(); ++k) {
      if ((mask >> k) & 1u) names.push_back(mesh.axis_names()[static_cast<std::size_t>(k)]);
    }
    sets.push_back(std::move(names));
  }
  return sets;
}

// The axis sets `op` can run over on `operand`: for psum_scatter and all_to_all, the group size
// must divide a dimension, either the whole set's or, with axis_index_groups, a divisor of it
// (groups of one always do).
std::vector<std::vector<std::string>> usable_axis_sets(const Mesh& mesh, const Operand& operand,
                                                       CollectiveOp op,
                                                       const CollectiveCallOptions& options) {
  std::vector<std::vector<std::string>> sets = axis_sets(mesh, operand, op, options.check_vma);
  if (!splits_a_dimension(op) || options.axis_index_groups) return sets;
  std::erase_if(sets, [&](const std::vector<std::string>& names) {
    return dimensions_divisible_by(operand.shape, group_size(mesh, names)).empty();
  });
  return sets;
}

bool can_take(CollectiveOp op, const Mesh& mesh, const Operand& operand,
              const CollectiveCallOptions& options) {
  if (splits_a_dimension(op) && operand.shape.empty()) return false;
  if (op == CollectiveOp::psum_scatter && operand.dtype == DType::bool_) return false;
  return !usable_axis_sets(mesh, operand, op, options).empty();
}

// `axis` of `positions` as a program may write it: as is, or counted from the end.
int maybe_negative(int axis, int positions) {
  return *rc::gen::arbitrary<bool>() ? axis - positions : axis;
}

// A random partition of 0..total-1 into groups of `size`, each in random order.
AxisIndexGroups index_groups(int total, int size) {
  const std::vector<int> order = *permutation(total);
  AxisIndexGroups groups;
  for (int begin = 0; begin < total; begin += size) {
    groups.emplace_back(order.begin() + begin, order.begin() + begin + size);
  }
  return groups;
}

// Draws the group size n (after axis_index_groups) and sets call.axis_index_groups.
int draw_groups(CollectiveCall& call, const Mesh& mesh, const Operand& operand,
                const CollectiveCallOptions& options) {
  const int total = group_size(mesh, call.axes.names);
  const bool needs_groups =
      splits_a_dimension(call.op) && dimensions_divisible_by(operand.shape, total).empty();
  const bool may_take = options.axis_index_groups && takes_groups(call.op, options.check_vma);
  if (!may_take || (!needs_groups && *rc::gen::arbitrary<bool>())) return total;
  std::vector<int> sizes = divisors(total);
  if (splits_a_dimension(call.op)) {
    std::erase_if(sizes, [&](int k) { return dimensions_divisible_by(operand.shape, k).empty(); });
  }
  const int size = *rc::gen::elementOf(sizes);
  call.axis_index_groups = index_groups(total, size);
  return size;
}

// psum_scatter's scatter_dimension or all_to_all's split_axis, and whether the call is tiled:
// untiled, the dimension must equal n; tiled, n must divide it.
int draw_split_dimension(CollectiveCall& call, const Shape& shape, int n) {
  std::vector<int> equal;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == n) equal.push_back(static_cast<int>(d));
  }
  call.tiled = equal.empty() || *rc::gen::arbitrary<bool>();
  const int dimension = *rc::gen::elementOf(call.tiled ? dimensions_divisible_by(shape, n) : equal);
  return maybe_negative(dimension, static_cast<int>(shape.size()));
}

void draw_parameters(CollectiveCall& call, const Operand& operand, int n) {
  const int rank = static_cast<int>(operand.shape.size());
  switch (call.op) {
    case CollectiveOp::all_gather: {
      call.tiled = rank >= 1 && *rc::gen::arbitrary<bool>();
      const int positions = call.tiled ? rank : rank + 1;
      call.axis = maybe_negative(*rc::gen::inRange(0, positions), positions);
      call.to_invariant = !call.axis_index_groups && *rc::gen::arbitrary<bool>();
      break;
    }
    case CollectiveOp::psum_scatter:
      call.axis = draw_split_dimension(call, operand.shape, n);
      break;
    case CollectiveOp::all_to_all:
      call.split_axis = draw_split_dimension(call, operand.shape, n);
      call.concat_axis = maybe_negative(*rc::gen::inRange(0, rank), rank);
      break;
    case CollectiveOp::ppermute: {
      std::vector<int> ranks;
      for (int r = 0; r < n; ++r) ranks.push_back(r);
      const auto count = *rc::gen::inRange<std::size_t>(0, ranks.size() + 1);
      const std::vector<int> sources = pick_in_random_order(ranks, count);
      const std::vector<int> destinations = pick_in_random_order(ranks, count);
      for (std::size_t i = 0; i < count; ++i) call.perm.emplace_back(sources[i], destinations[i]);
      break;
    }
    case CollectiveOp::pshuffle: call.shuffle = *permutation(n); break;
    default: break;
  }
}

}  // namespace

rc::Gen<CollectiveCall> collective_call(const Mesh& mesh, const Operand& operand,
                                        const CollectiveCallOptions& options) {
  return rc::gen::exec([=] {
    std::vector<CollectiveOp> ops = options.ops;
    std::erase_if(ops, [&](CollectiveOp op) { return !can_take(op, mesh, operand, options); });
    if (ops.empty()) {
      throw rc::GenerationFailure("collective_call: no operation in options.ops takes " +
                                  std::string(dtype_name(operand.dtype)) +
                                  shape_string(operand.shape) + " on " + mesh.to_string());
    }
    CollectiveCall call;
    call.op = *rc::gen::elementOf(ops);
    const std::vector<std::string> axes =
        *rc::gen::elementOf(usable_axis_sets(mesh, operand, call.op, options));
    // JAX 0.12 refuses a permute over names out of mesh order (where that changes a group).
    const bool permutes = call.op == CollectiveOp::ppermute || call.op == CollectiveOp::pshuffle;
    call.axes = AxisNames(permutes ? axes : pick_in_random_order(axes, axes.size()));
    const int n = draw_groups(call, mesh, operand, options);
    draw_parameters(call, operand, n);
    return call;
  });
}

}  // namespace spmd::testkit
