#include "reference/collective_semantics.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <string_view>
#include <vector>

#include "reference/collective_groups.h"
#include "reference/elementwise.h"
#include "reference/fold_reduce.h"
#include "reference/reduction_dtype.h"

namespace spmd {
namespace {

std::string api_name(CollectiveOp op) {
  switch (op) {  // the name JAX's unbound-axis error gives (parallel.py)
    case CollectiveOp::psum:
    case CollectiveOp::pmean:
    case CollectiveOp::pmax:
    case CollectiveOp::pmin: return "psum";
    case CollectiveOp::psum_scatter: return "reduce_scatter";
    case CollectiveOp::pshuffle: return "ppermute";
    default: return std::string(collective_op_name(op));
  }
}


// "((0, 1), (1, 2))", as Python prints JAX's tuple of pairs.
std::string perm_string(const CollectiveCall& call) {
  std::vector<std::string> pairs;
  for (auto [source, destination] : call.perm) {
    pairs.push_back(fmt::format("({}, {})", source, destination));
  }
  if (pairs.size() == 1) return fmt::format("({},)", pairs.front());
  return fmt::format("({})", fmt::join(pairs, ", "));
}

// JAX looks each index up in the group's devices as Python indexes a list (0.10.2) or a tuple
// (0.12): -n..n-1 are valid, negative ones counting from the end (docs/jax-differences.md).
// Then sources and destinations must each name distinct devices.
void validate_perm(const CollectiveCall& call, int n, JaxVersion jax_version) {
  for (auto [source, destination] : call.perm) {
    if (source < -n || source >= n || destination < -n || destination >= n) {
      throw Error(fmt::format(
          "IndexError: {} index out of range (ppermute pair ({}, {}) over a group of {}, "
          "expected indices in -{}..{})",
          jax_version == JaxVersion::v0_10 ? "list" : "tuple", source, destination, n, n, n - 1));
    }
  }
  // Marks by index, not sets: a pipeline's ppermute is checked on every device at every send.
  std::vector<char> is_source(static_cast<std::size_t>(n), 0);
  std::vector<char> is_destination(static_cast<std::size_t>(n), 0);
  for (auto [source, destination] : call.perm) {
    char& source_seen = is_source[static_cast<std::size_t>((source + n) % n)];
    char& destination_seen = is_destination[static_cast<std::size_t>((destination + n) % n)];
    if (source_seen || destination_seen) {
      throw Error(fmt::format("ppermute sources and destinations must be unique, got {}.",
                              perm_string(call)));
    }
    source_seen = destination_seen = 1;
  }
}

// JAX 0.12 refuses ppermute / pshuffle over several axes named in another order than the
// mesh's where that order changes a group: where some group, its devices ordered by the names
// as given, is not in ascending device order (lowering compares each group with it sorted;
// axes of size 1 change nothing). 0.10.2 sorted every group silently, as collective_groups does
// (docs/jax-differences.md). pshuffle's message names ppermute.
void check_permute_axes_in_mesh_order(const Mesh& mesh, const std::vector<int>& positions,
                                      JaxVersion jax_version) {
  if (jax_version == JaxVersion::v0_10 || std::is_sorted(positions.begin(), positions.end())) {
    return;
  }
  const std::vector<std::vector<int>> groups = axis_groups(mesh, positions);
  if (std::all_of(groups.begin(), groups.end(), [](const std::vector<int>& group) {
        return std::is_sorted(group.begin(), group.end());
      })) {
    return;
  }
  throw Error(
      "RuntimeError: Make sure that the axis_name passed to jax.lax.ppermute is in the same "
      "order as the axis_names declared on the mesh. If you want to allow different order, you "
      "can disable the check via `with jax.raise_on_ppermute_sort_diff(False):` context "
      "manager.");
}

void validate_shuffle(const CollectiveCall& call) {
  const std::set<int> values(call.shuffle.begin(), call.shuffle.end());
  bool is_permutation = values.size() == call.shuffle.size();
  for (int v : values) is_permutation = is_permutation && v >= 0 && v < int(values.size());
  if (!is_permutation) {
    std::string perm = call.to_string();
    throw Error("`perm` does not represent a permutation: " +
                perm.substr(perm.find("perm=") + 5, perm.rfind(']') - perm.find("perm=") - 4));
  }
}

// JAX 0.10.2 cannot lower a negative psum_scatter scatter_dimension (StableHLO's verifier
// rejects it) nor a negative all_to_all axis (the process crashes); 0.12 counts them from the
// end (docs/jax-differences.md).
void check_axis_not_negative_before_0_12(CollectiveOp op, int axis, const char* field,
                                         JaxVersion jax_version) {
  if (axis >= 0 || jax_version != JaxVersion::v0_10) return;
  const char* jax_does = op == CollectiveOp::psum_scatter
                             ? "ValueError: Cannot lower jaxpr with verifier errors: "
                               "'stablehlo.reduce_scatter' op attribute 'scatter_dimension' "
                               "failed to satisfy constraint: 64-bit signless integer attribute "
                               "whose value is non-negative"
                             : "JAX 0.10.2 ends with a segmentation fault lowering it";
  throw Error(fmt::format("{} = {}: {} (JAX 0.10); expected 0 <= {}, or JAX 0.12's rules", field,
                          axis, jax_does, field));
}

void validate_shapes(const CollectiveCall& call, const Shape& shape, int n,
                     JaxVersion jax_version) {
  const int rank = static_cast<int>(shape.size());
  const auto dim = [&](int d) { return shape[static_cast<std::size_t>(d)]; };
  // For errors only: formatted when one is thrown.
  const auto axis = [&] { return call.axes.to_string(); };
  if (call.op == CollectiveOp::all_gather) {
    normalize_axis(call.axis, call.tiled ? rank : rank + 1, "all_gather axis");
  } else if (call.op == CollectiveOp::psum_scatter) {
    check_axis_not_negative_before_0_12(call.op, call.axis, "psum_scatter scatter_dimension",
                                        jax_version);
    const int d = normalize_axis(call.axis, rank, "psum_scatter scatter_dimension");
    const std::int64_t m = dim(d);
    if (!call.tiled && m != n) {
      throw Error(fmt::format(
          "reduce_scatter operand scatter dimension size {} must match shard count {}", m, n));
    }
    if (call.tiled && m % n != 0) {
      throw Error(
          fmt::format("tiled reduce_scatter operand scatter dimension size {} must be divisible by "
                      "shard_count {}",
                      m, n));
    }
  } else if (call.op == CollectiveOp::all_to_all) {
    check_axis_not_negative_before_0_12(call.op, call.split_axis, "all_to_all split_axis",
                                        jax_version);
    check_axis_not_negative_before_0_12(call.op, call.concat_axis, "all_to_all concat_axis",
                                        jax_version);
    const int split = normalize_axis(call.split_axis, rank, "all_to_all split_axis");
    normalize_axis(call.concat_axis, rank, "all_to_all concat_axis");
    const std::int64_t m = dim(split);
    if (call.tiled && m % n != 0) {
      throw Error(fmt::format(
          "The size of all_to_all split_axis ({}) has to be divisible by the size of the named "
          "axis {} ({})",
          m, axis(), n));
    }
    if (!call.tiled && m != n) {
      throw Error(fmt::format(
          "all_to_all requires the size of the mapped axis {} to equal x.shape[split_axis], but "
          "they are {} and {} respectively.",
          axis(), n, m));
    }
  }
}

std::vector<Array> members_inputs(const std::vector<Array>& inputs, const std::vector<int>& group) {
  std::vector<Array> contributions;
  contributions.reserve(group.size());
  for (int device : group) contributions.push_back(inputs[static_cast<std::size_t>(device)]);
  return contributions;
}

// psum's result for one group, in reduction_dtype (bool is summed as int32).
Array group_sum(std::vector<Array> contributions, const ReductionOrder& order) {
  const DType dtype = reduction_dtype(CollectiveOp::psum, contributions.front().dtype());
  if (contributions.front().dtype() != dtype) {
    for (Array& c : contributions) c = convert(c, dtype);
  }
  return all_reduce(contributions, ReduceOp::sum, order);
}

std::vector<Array> group_psum_scatter(const CollectiveCall& call,
                                      const std::vector<Array>& contributions,
                                      const ReductionOrder& order) {
  const int n = static_cast<int>(contributions.size());
  const int d = normalize_axis(call.axis, contributions.front().rank(), "scatter_dimension");
  const std::int64_t block = contributions.front().dim(d) / n;
  std::vector<Array> results;
  for (int r = 0; r < n; ++r) {
    std::vector<Array> blocks;
    for (const Array& c : contributions) blocks.push_back(slice(c, d, r * block, (r + 1) * block));
    const ReduceOp op = reduction_op(CollectiveOp::psum_scatter, blocks.front().dtype());
    Array reduced =
        reduce_with_plan(blocks, op, order.reduce_scatter_plan(n, r, blocks.front().size()), order);
    results.push_back(call.tiled ? reduced : squeeze(reduced, d));
  }
  return results;
}

std::vector<Array> group_all_to_all(const CollectiveCall& call,
                                    const std::vector<Array>& contributions) {
  const int n = static_cast<int>(contributions.size());
  const int rank = contributions.front().rank();
  const int split = normalize_axis(call.split_axis, rank, "split_axis");
  const int concat = normalize_axis(call.concat_axis, rank, "concat_axis");
  const std::int64_t block = contributions.front().dim(split) / n;
  std::vector<Array> results;
  for (int receiver = 0; receiver < n; ++receiver) {
    std::vector<Array> pieces;
    for (const Array& c : contributions) {
      pieces.push_back(call.tiled ? slice(c, split, receiver * block, (receiver + 1) * block)
                                  : take(c, split, receiver));
    }
    results.push_back(call.tiled ? concatenate(pieces, concat) : stack(pieces, concat));
  }
  return results;
}

std::vector<Array> group_permute(const CollectiveCall& call,
                                 const std::vector<Array>& contributions) {
  const int n = static_cast<int>(contributions.size());
  std::vector<Array> results;
  for (const Array& c : contributions) results.push_back(zeros_like(c));
  auto move = [&](int source, int destination) {  // indices in -n..n-1 (validate_perm)
    results[static_cast<std::size_t>((destination + n) % n)] =
        contributions[static_cast<std::size_t>((source + n) % n)];
  };
  if (call.op == CollectiveOp::ppermute) {
    for (auto [source, destination] : call.perm) move(source, destination);
  } else {
    for (std::size_t i = 0; i < call.shuffle.size(); ++i)
      move(call.shuffle[i], static_cast<int>(i));
  }
  return results;
}

// Results for one group, in rank order.
std::vector<Array> evaluate_group(const CollectiveCall& call, std::vector<Array> contributions,
                                  int axis_size, const ReductionOrder& order) {
  const std::size_t n = contributions.size();
  switch (call.op) {
    case CollectiveOp::psum:
      return std::vector<Array>(n, group_sum(std::move(contributions), order));
    case CollectiveOp::pmean:
      return std::vector<Array>(
          n, pmean_from_sum(group_sum(std::move(contributions), order), axis_size,
                            order.numerics()));
    case CollectiveOp::pmax:
      return std::vector<Array>(n, all_reduce(contributions, ReduceOp::max, order));
    case CollectiveOp::pmin:
      return std::vector<Array>(n, all_reduce(contributions, ReduceOp::min, order));
    case CollectiveOp::all_gather: {
      const int rank = contributions.front().rank();
      const Array gathered =
          call.tiled ? concatenate(contributions, normalize_axis(call.axis, rank, "axis"))
                     : stack(contributions, normalize_axis(call.axis, rank + 1, "axis"));
      return std::vector<Array>(n, gathered);
    }
    case CollectiveOp::psum_scatter: return group_psum_scatter(call, contributions, order);
    case CollectiveOp::all_to_all: return group_all_to_all(call, contributions);
    case CollectiveOp::ppermute:
    case CollectiveOp::pshuffle: return group_permute(call, contributions);
    case CollectiveOp::axis_index: break;
  }
  throw Error("evaluate_collective: axis_index is computed locally, not as a collective");
}

}  // namespace

namespace {

// "float32[2]{V:x}" or "bfloat16[2,3]{V:(y,z)}", as JAX writes a typed value under check_vma.
std::string vma_type_string(const Array& input, const Mesh& mesh) {
  std::vector<std::string> names;
  for (std::size_t k = 0; k < mesh.axis_names().size(); ++k) {
    if ((input.varying_axes() >> k) & 1) names.push_back(mesh.axis_names()[k]);
  }
  if (names.empty()) return input.type_string();
  if (names.size() == 1) return fmt::format("{}{{V:{}}}", input.type_string(), names.front());
  return fmt::format("{}{{V:({})}}", input.type_string(), fmt::join(names, ","));
}

// Under check_vma, psum / pmean / psum_scatter over several axes need the input to vary over all
// of them or over none; a mix is rejected (auto-pvary does not apply). JAX 0.12 rejects it for
// pmax / pmin too; 0.10.2 accepts it there, as the data-movement collectives do in both. Found
// by running JAX (docs/jax-differences.md).
bool refuses_partly_varying_input(CollectiveOp op, JaxVersion jax_version) {
  switch (op) {
    case CollectiveOp::psum:
    case CollectiveOp::pmean:
    case CollectiveOp::psum_scatter: return true;
    case CollectiveOp::pmax:
    case CollectiveOp::pmin: return jax_version != JaxVersion::v0_10;
    default: return false;
  }
}

// The API name in the error: pmean is psum then a division.
std::string_view partly_varying_api(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::psum_scatter: return "psum_scatter";
    case CollectiveOp::pmax: return "pmax";
    case CollectiveOp::pmin: return "pmin";
    default: return "psum";
  }
}

void check_axes_all_varying_or_all_invariant(const CollectiveCall& call, const Mesh& mesh,
                                             const Array& input, JaxVersion jax_version) {
  if (!refuses_partly_varying_input(call.op, jax_version)) return;
  const std::vector<int> positions = resolve_axes(mesh, call.axes, api_name(call.op));
  std::size_t varying = 0;
  for (int k : positions) varying += (input.varying_axes() >> k) & 1;
  if (varying == 0 || varying == positions.size()) return;
  throw Error(fmt::format(
      "jax.lax.{} can only accept axis_name which corresponds to one of varying, unreduced, "
      "reduced or invarying state of the input. Got input type: {}, axes: {} and input state: "
      "{{'varying', 'invarying'}}",
      partly_varying_api(call.op), vma_type_string(input, mesh), call.axes.to_string()));
}

}  // namespace

void validate_collective(const CollectiveCall& call, const Mesh& mesh, const Array& input,
                         bool check_vma, JaxVersion jax_version) {
  validate_collective(call, mesh, input.dtype(), input.shape(), check_vma, jax_version);
  if (check_vma) check_axes_all_varying_or_all_invariant(call, mesh, input, jax_version);
}

void validate_collective(const CollectiveCall& call, const Mesh& mesh, DType dtype,
                         const Shape& shape, bool check_vma, JaxVersion jax_version) {
  if (call.op == CollectiveOp::psum_scatter && dtype == DType::bool_) {
    // Unlike psum, psum_scatter does not convert bool first; lax.add rejects it.
    throw Error(
        "TypeError: add does not accept dtype bool at position 0. Accepted dtypes at position 0 "
        "are subtypes of integer, floating, complexfloating.");
  }
  const std::vector<int> positions = resolve_axes(mesh, call.axes, api_name(call.op));
  int total = 1;
  for (int k : positions) total *= mesh.shape()[static_cast<std::size_t>(k)];
  if (call.axis_index_groups) {
    if (call.op == CollectiveOp::ppermute || call.op == CollectiveOp::pshuffle ||
        call.op == CollectiveOp::axis_index) {
      throw Error(std::string(collective_op_name(call.op)) +
                  " does not take axis_index_groups, expected none");
    }
    validate_axis_index_groups(*call.axis_index_groups, total);
    if (call.to_invariant) {
      throw Error("all_gather(to='invarying') does not take axis_index_groups, expected none");
    }
    if ((call.op == CollectiveOp::psum || call.op == CollectiveOp::pmean) && check_vma) {
      throw Error(
          "NotImplementedError: psum with axis_index_groups is not implemented under "
          "shard_map with check_vma=True (JAX bind_psum_invariant); pass "
          "check_vma=False");
    }
    const auto& groups = *call.axis_index_groups;
    for (const auto& g : groups) {
      if (g.size() != groups.front().size() && !is_all_reduce(call.op)) {
        throw Error(fmt::format(
            "{}: Replica groups must be equally sized, got axis_index_groups of sizes {} and {}",
            collective_op_name(call.op), groups.front().size(), g.size()));
      }
    }
  }
  if (call.op == CollectiveOp::ppermute || call.op == CollectiveOp::pshuffle) {
    check_permute_axes_in_mesh_order(mesh, positions, jax_version);
  }
  const int n = collective_axis_size(mesh, call);
  if (call.op == CollectiveOp::ppermute) validate_perm(call, n, jax_version);
  if (call.op == CollectiveOp::pshuffle) {
    validate_shuffle(call);
    // JAX's pshuffle is ppermute(x, name, zip(perm, range(len(perm)))): a perm longer than the
    // axis names a device that is not there.
    CollectiveCall as_ppermute = call;
    as_ppermute.op = CollectiveOp::ppermute;
    for (std::size_t i = 0; i < call.shuffle.size(); ++i) {
      as_ppermute.perm.emplace_back(call.shuffle[i], static_cast<int>(i));
    }
    validate_perm(as_ppermute, n, jax_version);
  }
  validate_shapes(call, shape, n, jax_version);
}

VaryingAxes result_varying_axes(const CollectiveCall& call, const Mesh& mesh, VaryingAxes input) {
  VaryingAxes named = 0;
  for (const std::string& name : call.axes.names) {
    named |= VaryingAxes{1} << mesh.find_axis(name);
  }
  if (call.op == CollectiveOp::axis_index) return named;
  if (is_all_reduce(call.op) || call.to_invariant) return input & ~named;
  return input | named;
}

std::vector<Array> evaluate_collective(const CollectiveCall& call, const Mesh& mesh,
                                       const std::vector<Array>& inputs,
                                       const ReductionOrder& order) {
  const int axis_size = collective_axis_size(mesh, call);
  order.check_device_ring(mesh.device_count());
  std::vector<Array> results(inputs.size());
  for (const std::vector<int>& group : collective_groups(mesh, call)) {
    std::vector<Array> group_results =
        evaluate_group(call, members_inputs(inputs, group), axis_size, order.for_group(group));
    for (std::size_t r = 0; r < group.size(); ++r) {
      results[static_cast<std::size_t>(group[r])] = std::move(group_results[r]);
    }
  }
  return results;
}

bool is_all_reduce(CollectiveOp op) {
  return op == CollectiveOp::psum || op == CollectiveOp::pmean || op == CollectiveOp::pmax ||
         op == CollectiveOp::pmin;
}

Array pmean_from_sum(Array sum, int n, const FloatNumerics& numerics) {
  if (!is_floating(sum.dtype())) sum = convert(sum, DType::float32);
  if (n == 1) return sum;
  if (sum.dtype() == DType::bfloat16) {
    // XLA:CPU normalizes bfloat16 arithmetic to float32 (FloatNormalization), so the reciprocal
    // is a float32 constant and the product rounds to bfloat16 once. Found by running JAX 0.10.2
    // (docs/jax-differences.md); float16 keeps a float16 reciprocal.
    const Array product = mul(convert(sum, DType::float32),
                              convert(Array::scalar<double>(1.0 / n), DType::float32), numerics);
    return convert(product, DType::bfloat16);
  }
  const Array reciprocal = convert(Array::scalar<double>(1.0 / n), sum.dtype());
  return mul(sum, reciprocal, numerics);
}

Array axis_index_value(const Mesh& mesh, const AxisNames& axes, int device) {
  const std::vector<int> positions = resolve_axes(mesh, axes, "axis_index");
  const std::vector<int> coords = mesh.coordinates(device);
  std::int32_t index = 0;
  for (int k : positions) {
    index = index * mesh.shape()[static_cast<std::size_t>(k)] + coords[static_cast<std::size_t>(k)];
  }
  return Array::scalar<std::int32_t>(index);
}

}  // namespace spmd
