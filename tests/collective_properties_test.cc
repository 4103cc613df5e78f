// Laws the collectives obey, checked on random meshes (1-16 devices, 1-3 axes), random axis
// subsets in random order, every dtype and random data, through shard_map / pmap on the reference
// backend. Each property's name states its law. Case count from RC_PARAMS (CI: max_success=1000).

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "reference/elementwise.h"
#include "reference/pmap.h"
#include "reference/reference_backend.h"
#include "reference/scalar_arithmetic.h"
#include "reference/shard_map.h"
#include "tests/generators.h"

namespace spmd {
namespace {

using test_gen::combined_index;
using test_gen::group_members;
using testkit::group_size;
using test_gen::run_per_device;

Array scalar_i32(std::int32_t v) { return Array::scalar<std::int32_t>(v); }

bool bits_equal(const Array& a, const Array& b) { return a.bitwise_equal(b); }

// ---- Independent arithmetic for the expected values

// One rounded addition in the dtype T (halves: in float, rounded once to nearest even).
template <class T>
T add_in(T a, T b) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return T::from_float(a.to_float() + b.to_float());
  } else {
    return a + b;
  }
}

// XLA:CPU all-reduce of float contributions given in group rank order
// (docs/reduction-orders.md#xla-cpu): acc = +0.0; acc += x_r for r = 0..n-1 in the element type,
// bfloat16 carried in float32 and rounded once, float32 / bfloat16 / float64 subnormals flushed
// (operands and results). A group of one folds too; only a program on one device copies.
Array xla_cpu_float_sum(const std::vector<Array>& in_rank_order, bool one_device_program) {
  if (one_device_program) return in_rank_order.front();
  const auto ftz = [](auto value) { return arith::flush_subnormal(value); };
  Array out(in_rank_order.front().dtype(), in_rank_order.front().shape());
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Float16> ||
                  std::is_same_v<T, BFloat16>) {
      auto o = out.mutable_values<T>();
      for (std::size_t i = 0; i < o.size(); ++i) {
        if constexpr (std::is_same_v<T, BFloat16>) {
          float acc = +0.0f;
          for (const Array& x : in_rank_order) acc = ftz(acc + ftz(x.values<T>()[i].to_float()));
          o[i] = BFloat16::from_float(acc);
        } else {
          T acc{};  // +0.0
          for (const Array& x : in_rank_order) acc = ftz(add_in(ftz(acc), ftz(x.values<T>()[i])));
          o[i] = acc;
        }
      }
    }
  });
  return out;
}

// Value of `node` of a fold tree for element i, in accumulator type Acc.
// With `ftz` (XLA:CPU) every addition flushes subnormal operands and results to signed zero.
template <class T, class Acc>
Acc eval_fold(const FoldTree& tree, int node, const std::vector<Array>& x, std::size_t i,
              bool ftz) {
  const FoldNode& n = tree.nodes[static_cast<std::size_t>(node)];
  if (n.rank == FoldNode::kIdentityLeaf) return Acc{};  // +0
  if (n.rank != FoldNode::kNotLeaf) {
    const T v = x[static_cast<std::size_t>(n.rank)].values<T>()[i];
    if constexpr (std::is_same_v<T, Acc>) return v;
    else return v.to_float();
  }
  const auto flush = [ftz](Acc v) { return ftz ? arith::flush_subnormal(v) : v; };
  return flush(add_in(flush(eval_fold<T, Acc>(tree, n.lhs, x, i, ftz)),
                      flush(eval_fold<T, Acc>(tree, n.rhs, x, i, ftz))));
}

// Elements [begin, end) of `out` folded by `tree` over the contributions; with bf16_in_f32 a
// bfloat16 sum is carried in float32 and rounded once (a lone leaf is still a plain copy).
void fold_elements(const FoldTree& tree, const std::vector<Array>& x, bool bf16_in_f32, bool ftz,
                   std::int64_t begin, std::int64_t end, Array& out) {
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Float16> ||
                  std::is_same_v<T, BFloat16>) {
      auto o = out.mutable_values<T>();
      const int root = static_cast<int>(tree.nodes.size()) - 1;
      const bool lone_leaf = tree.nodes.back().rank != FoldNode::kNotLeaf;
      for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
        if constexpr (std::is_same_v<T, BFloat16>) {
          if (bf16_in_f32 && !lone_leaf) {
            o[i] = BFloat16::from_float(eval_fold<T, float>(tree, root, x, i, ftz));
            continue;
          }
        }
        o[i] = eval_fold<T, T>(tree, root, x, i, ftz);
      }
    }
  });
}

// Only XLA:CPU promotes bfloat16 sums to float32 (AllReducePromotion,
// docs/reduction-orders.md#xla-cpu).
bool bf16_in_f32(const ReductionOrder& order) {
  return order.algorithm == ReductionAlgorithm::xla_cpu;
}

// An all-reduce sum per the order's declared plan: each element by the fold of its chunk (a
// program on one device copies: XLA removes its all-reduces).
Array planned_float_sum(const std::vector<Array>& in_rank_order, const ReductionOrder& order,
                        bool one_device_program) {
  const Array& first = in_rank_order.front();
  if (one_device_program) return first;
  Array out(first.dtype(), first.shape());
  std::int64_t covered = 0;
  for (const ChunkFold& chunk :
       order.all_reduce_plan(static_cast<int>(in_rank_order.size()), first.size(), first.dtype())) {
    RC_ASSERT(chunk.begin == covered);  // the chunks tile [0, count) in order
    covered = chunk.end;
    fold_elements(chunk.tree, in_rank_order, bf16_in_f32(order), order.numerics().flush_subnormals,
                  chunk.begin, chunk.end, out);
  }
  RC_ASSERT(covered == first.size());
  return out;
}

// std::max / std::min folds from the identity, in rank order (XLA:CPU,
// docs/reduction-orders.md#xla-cpu); a group of one is a memcpy.
Array max_or_min_fold(const std::vector<Array>& in_rank_order, bool is_max,
                      bool one_device_program) {
  if (one_device_program) return in_rank_order.front();
  const auto ftz = [](auto value) { return arith::flush_subnormal(value); };
  Array out(in_rank_order.front().dtype(), in_rank_order.front().shape());
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    auto o = out.mutable_values<T>();
    for (std::size_t i = 0; i < o.size(); ++i) {
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        // std::max(acc, v) is `acc < v ? v : acc`, std::min(acc, v) is `v < acc ? v : acc`.
        T acc = T::from_float(is_max ? -std::numeric_limits<float>::infinity()
                                     : std::numeric_limits<float>::infinity());
        for (const Array& x : in_rank_order) {
          const T v = ftz(x.values<T>()[i]);
          const bool take = is_max ? acc.to_float() < v.to_float() : v.to_float() < acc.to_float();
          if (take) acc = v;
        }
        o[i] = acc;
      } else {
        T acc = is_max ? (std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity()
                                                      : std::numeric_limits<T>::lowest())
                       : (std::is_floating_point_v<T> ? std::numeric_limits<T>::infinity()
                                                      : std::numeric_limits<T>::max());
        for (const Array& x : in_rank_order) {
          const T v = ftz(x.values<T>()[i]);
          acc = is_max ? std::max(acc, v) : std::min(acc, v);
        }
        o[i] = acc;
      }
    }
  });
  return out;
}

std::vector<Array> in_rank_order(const std::vector<Array>& per_device,
                                 const std::vector<int>& members) {
  std::vector<Array> out;
  for (int d : members) out.push_back(per_device[static_cast<std::size_t>(d)]);
  return out;
}

std::vector<Values> as_args(const std::vector<Array>& per_device) {
  std::vector<Values> args;
  for (const Array& a : per_device) args.push_back({a});
  return args;
}

// ---- Data movement and integer sums

RC_GTEST_PROP(CollectiveProperties, all_gather_tiled_after_psum_scatter_tiled_is_psum, ()) {
  const Mesh mesh = *testkit::mesh();
  const auto axes = *testkit::axis_subset(mesh);
  const int n = group_size(mesh, axes);
  const DType dtype = *testkit::dtype_of(testkit::integer_dtypes());
  const int rank = *rc::gen::inRange(1, 4);
  const int dim = *rc::gen::inRange(0, rank);
  const Shape shape = testkit::shape_with_multiple(rank, dim, n);
  const auto inputs =
      random_per_device(dtype, shape, mesh.device_count(), *testkit::seed());
  // Integer sums are exact in any order, so any declared order must give the same bits.
  ReferenceBackend backend(*testkit::backend_reduction_order(n, mesh));
  const auto out = run_per_device(
      backend, mesh, as_args(inputs), 2, [&](Context& ctx, const Values& in) -> Values {
        const Array scattered = ctx.psum_scatter(in[0], axes, dim, /*tiled=*/true);
        return {ctx.all_gather(scattered, axes, dim, /*tiled=*/true), ctx.psum(in[0], axes)};
      });
  for (const Values& device : out) RC_ASSERT(bits_equal(device[0], device[1]));
}

RC_GTEST_PROP(CollectiveProperties, all_to_all_then_inverse_all_to_all_is_identity, ()) {
  const Mesh mesh = *testkit::mesh();
  const auto axes = *testkit::axis_subset(mesh);
  const int n = group_size(mesh, axes);
  const DType dtype = *testkit::dtype_of(testkit::all_dtypes());
  const bool tiled = *rc::gen::arbitrary<bool>();
  const int rank = *rc::gen::inRange(1, 4);
  const int split = *rc::gen::inRange(0, rank);
  const int concat = *rc::gen::inRange(0, rank);
  const Shape shape = tiled ? testkit::shape_with_multiple(rank, split, n)
                            : testkit::shape_with_multiple(rank, split, n, 1);
  const auto inputs =
      random_per_device(dtype, shape, mesh.device_count(), *testkit::seed());
  ReferenceBackend backend;
  const auto out = run_per_device(
      backend, mesh, as_args(inputs), 1, [&](Context& ctx, const Values& in) -> Values {
        const Array there = ctx.all_to_all(in[0], axes, split, concat, tiled);
        return {ctx.all_to_all(there, axes, concat, split, tiled)};  // split and concat swapped
      });
  for (int d = 0; d < mesh.device_count(); ++d) {
    RC_ASSERT(bits_equal(out[static_cast<std::size_t>(d)][0], inputs[static_cast<std::size_t>(d)]));
  }
}

RC_GTEST_PROP(CollectiveProperties, ppermute_then_inverse_permutation_is_identity, ()) {
  const Mesh mesh = *testkit::mesh();
  const auto axes = *testkit::axis_subset(mesh);
  const int n = group_size(mesh, axes);
  const DType dtype = *testkit::dtype_of(testkit::all_dtypes());
  const Shape shape = *testkit::shape();
  const auto inputs =
      random_per_device(dtype, shape, mesh.device_count(), *testkit::seed());
  // A full permutation, or a partial one (some sources dropped); indices sometimes written as
  // index - n, which JAX takes modulo n.
  const std::vector<int> sigma = *testkit::permutation(n);
  const bool partial = *rc::gen::arbitrary<bool>();
  std::vector<std::pair<int, int>> perm, inverse;
  std::set<int> sources;
  for (int s = 0; s < n; ++s) {
    if (partial && *rc::gen::arbitrary<bool>()) continue;
    const int src = *rc::gen::arbitrary<bool>() ? s - n : s;
    const int dst = sigma[static_cast<std::size_t>(s)];
    perm.emplace_back(src, dst);
    inverse.emplace_back(dst, src);
    sources.insert(s);
  }
  // ppermute over several axes indexes the group in mesh-axis order (JAX 0.10.2,
  // docs/jax-checklist.md#group-order); JAX 0.12 refuses names out of mesh order, so the
  // property runs with 0.10's rules.
  std::vector<std::string> mesh_order;
  for (const std::string& name : mesh.axis_names()) {
    if (std::find(axes.begin(), axes.end(), name) != axes.end()) mesh_order.push_back(name);
  }
  ReferenceBackend backend;
  const auto out = run_per_device(
      backend, mesh, as_args(inputs), 1, [&](Context& ctx, const Values& in) -> Values {
        ctx.set_jax_version(JaxVersion::v0_10);
        return {ctx.ppermute(ctx.ppermute(in[0], axes, perm), axes, inverse)};
      });
  for (int d = 0; d < mesh.device_count(); ++d) {
    const Array& got = out[static_cast<std::size_t>(d)][0];
    if (sources.count(combined_index(mesh, mesh_order, d))) {
      RC_ASSERT(bits_equal(got, inputs[static_cast<std::size_t>(d)]));
    } else {  // not a source, so not a receiver of the inverse: zeros
      RC_ASSERT(bits_equal(got, zeros_like(inputs[static_cast<std::size_t>(d)])));
    }
  }
}

RC_GTEST_PROP(CollectiveProperties, psum_over_two_axes_equals_psum_over_each_in_turn, ()) {
  const Mesh mesh = *testkit::mesh(/*min_axes=*/2);
  const auto axes = *testkit::axis_subset(mesh, /*min_count=*/2);
  const DType dtype = *testkit::dtype_of(testkit::integer_dtypes());
  const Shape shape = *testkit::shape();
  const auto inputs =
      random_per_device(dtype, shape, mesh.device_count(), *testkit::seed());
  ReferenceBackend backend;
  const auto out = run_per_device(backend, mesh, as_args(inputs), 2,
                                  [&](Context& ctx, const Values& in) -> Values {
                                    Array in_turn = in[0];
                                    for (const std::string& axis : axes)
                                      in_turn = ctx.psum(in_turn, axis);
                                    return {ctx.psum(in[0], axes), in_turn};
                                  });
  for (const Values& device : out) RC_ASSERT(bits_equal(device[0], device[1]));
}

// ---- Float sums in the declared order

RC_GTEST_PROP(CollectiveProperties, float_psum_equals_explicit_fold_in_declared_order_xla_cpu, ()) {
  const Mesh mesh = *testkit::mesh();
  const auto axes = *testkit::axis_subset(mesh);
  const DType dtype = *testkit::dtype_of(testkit::float_dtypes());
  const Shape shape = *testkit::shape();
  RandomArrayOptions data;
  data.zero_in = *rc::gen::element(2, 16);  // often all -0.0: the +0.0 start shows
  const auto inputs =
      random_per_device(dtype, shape, mesh.device_count(), *testkit::seed(), data);
  ReferenceBackend backend;  // xla_cpu
  const auto out = run_per_device(
      backend, mesh, as_args(inputs), 1,
      [&](Context& ctx, const Values& in) -> Values { return {ctx.psum(in[0], axes)}; });
  for (int d = 0; d < mesh.device_count(); ++d) {
    const Array expected = xla_cpu_float_sum(in_rank_order(inputs, group_members(mesh, axes, d)),
                                             mesh.device_count() == 1);
    RC_ASSERT(bits_equal(out[static_cast<std::size_t>(d)][0], expected));
  }
}

// Every algorithm whose order is modelled for the group size, each with a random ring and small
// chunk / segment sizes; the expected value evaluates the declared FoldTree of each element's
// chunk (ReductionOrder::all_reduce_plan) recursively, one rounded addition per inner node.
RC_GTEST_PROP(CollectiveProperties,
              float_psum_equals_explicit_fold_in_declared_order_every_algorithm, ()) {
  const Mesh mesh = *testkit::mesh();
  const auto axes = *testkit::axis_subset(mesh);
  const int n = group_size(mesh, axes);
  const DType dtype = *testkit::dtype_of(testkit::float_dtypes());
  const Shape shape = *testkit::shape(0, 3, 5);
  const auto inputs =
      random_per_device(dtype, shape, mesh.device_count(), *testkit::seed());
  for (const ReductionAlgorithm algorithm : kAllReductionAlgorithms) {
    ReductionOrder order = *testkit::backend_reduction_order(n, mesh);
    order.algorithm = algorithm;
    if (algorithm == ReductionAlgorithm::gloo_bcube && !std::has_single_bit(unsigned(n)) &&
        n != 3) {
      continue;  // not modelled for this group size
    }
    ReferenceBackend backend(order);
    const auto out = run_per_device(
        backend, mesh, as_args(inputs), 1,
        [&](Context& ctx, const Values& in) -> Values { return {ctx.psum(in[0], axes)}; });
    for (int d = 0; d < mesh.device_count(); ++d) {
      const auto members = group_members(mesh, axes, d);
      const Array expected =
          planned_float_sum(in_rank_order(inputs, members), order.for_group(members),
                            mesh.device_count() == 1);
      RC_ASSERT(bits_equal(out[static_cast<std::size_t>(d)][0], expected));
    }
  }
}

// Reduce-scatter: the block that group rank r receives is folded chunk by chunk as
// reduce_scatter_plan(n, r, count) says (one chunk, reduce_scatter_fold, for most orders).
RC_GTEST_PROP(CollectiveProperties, float_psum_scatter_equals_reduce_scatter_fold_in_declared_order,
              ()) {
  const Mesh mesh = *testkit::mesh();
  const auto axes = *testkit::axis_subset(mesh);
  const int n = group_size(mesh, axes);
  const DType dtype = *testkit::dtype_of(testkit::float_dtypes());
  const int rank = *rc::gen::inRange(1, 3);
  const int dim = *rc::gen::inRange(0, rank);
  const Shape shape = testkit::shape_with_multiple(rank, dim, n);
  const auto inputs =
      random_per_device(dtype, shape, mesh.device_count(), *testkit::seed());
  const ReductionOrder order = *testkit::backend_reduction_order(n, mesh);
  RC_TAG(reduction_algorithm_name(order.algorithm));
  ReferenceBackend backend(order);
  const auto out = run_per_device(backend, mesh, as_args(inputs), 1,
                                  [&](Context& ctx, const Values& in) -> Values {
                                    return {ctx.psum_scatter(in[0], axes, dim, /*tiled=*/true)};
                                  });
  const std::int64_t block = shape[static_cast<std::size_t>(dim)] / n;
  for (int d = 0; d < mesh.device_count(); ++d) {
    const auto members = group_members(mesh, axes, d);
    const auto r = static_cast<int>(std::find(members.begin(), members.end(), d) - members.begin());
    std::vector<Array> blocks;
    for (int m : members) {
      blocks.push_back(slice(inputs[static_cast<std::size_t>(m)], dim, r * block, (r + 1) * block));
    }
    Array expected(dtype, blocks.front().shape());
    const ReductionOrder group_order = order.for_group(members);
    for (const ChunkFold& chunk : group_order.reduce_scatter_plan(n, r, expected.size())) {
      fold_elements(chunk.tree, blocks, bf16_in_f32(order), order.numerics().flush_subnormals,
                    chunk.begin, chunk.end, expected);
    }
    RC_ASSERT(bits_equal(out[static_cast<std::size_t>(d)][0], expected));
  }
}

// ---- shard_map splitting and assembly

RC_GTEST_PROP(CollectiveProperties, shard_map_split_then_assemble_with_same_spec_is_identity, ()) {
  const Mesh mesh = *testkit::mesh();
  const DType dtype = *testkit::dtype_of(testkit::all_dtypes());
  const int rank = *rc::gen::inRange(0, 4);
  // Each mesh axis goes to one random dimension or stays unnamed (replicated); a dimension's
  // axes are listed in random order, so entries are None, one name or a tuple.
  std::vector<SpecEntry> entries(static_cast<std::size_t>(rank));
  for (const std::string& name : *testkit::axis_subset(mesh)) {
    const int d = *rc::gen::inRange(-1, rank);
    if (d >= 0) entries[static_cast<std::size_t>(d)].push_back(name);
  }
  // The written length may stop before trailing None entries.
  std::size_t length = entries.size();
  while (length > 0 && entries[length - 1].empty() && *rc::gen::arbitrary<bool>()) --length;
  entries.resize(length);
  const PartitionSpec spec(entries);
  Shape shape;
  for (int d = 0; d < rank; ++d) {
    shape.push_back(block_count(spec, mesh, d) * *rc::gen::inRange<std::int64_t>(1, 3));
  }
  const Array global = random_array(dtype, shape, *testkit::seed());
  ShardMapOptions options;
  options.in_specs = {spec};
  options.out_specs = {spec};
  options.check_vma = *rc::gen::arbitrary<bool>();
  ReferenceBackend backend;
  const Values out = run_shard_map(backend, mesh, [](Context&, const Values& in) { return in; },
                                   options, {global});
  RC_ASSERT(bits_equal(out.at(0), global));
}

// ---- Reductions other than sum

RC_GTEST_PROP(CollectiveProperties, pmax_and_pmin_equal_std_max_and_std_min_folds, ()) {
  const Mesh mesh = *testkit::mesh();
  const auto axes = *testkit::axis_subset(mesh);
  const DType dtype = *testkit::dtype_of(testkit::all_dtypes());
  const Shape shape = *testkit::shape();
  RandomArrayOptions data;
  data.special_in = 6;  // NaN and infinities: std::max drops NaN
  const auto inputs =
      random_per_device(dtype, shape, mesh.device_count(), *testkit::seed(), data);
  ReferenceBackend backend;
  const auto out = run_per_device(backend, mesh, as_args(inputs), 2,
                                  [&](Context& ctx, const Values& in) -> Values {
                                    return {ctx.pmax(in[0], axes), ctx.pmin(in[0], axes)};
                                  });
  for (int d = 0; d < mesh.device_count(); ++d) {
    const auto group = in_rank_order(inputs, group_members(mesh, axes, d));
    const bool one_device = mesh.device_count() == 1;
    RC_ASSERT(bits_equal(out[static_cast<std::size_t>(d)][0],
                         max_or_min_fold(group, true, one_device)));
    RC_ASSERT(bits_equal(out[static_cast<std::size_t>(d)][1],
                         max_or_min_fold(group, false, one_device)));
  }
}

// pmean = psum * RN(1/n) in the result dtype (XLA HandleDivide); ints and bool become float32.
RC_GTEST_PROP(CollectiveProperties, pmean_equals_psum_times_rounded_reciprocal, ()) {
  const Mesh mesh = *testkit::mesh();
  const auto axes = *testkit::axis_subset(mesh);
  const int n = group_size(mesh, axes);
  const DType dtype = *testkit::dtype_of(testkit::all_dtypes());
  const Shape shape = *testkit::shape();
  const auto inputs =
      random_per_device(dtype, shape, mesh.device_count(), *testkit::seed());
  ReferenceBackend backend;
  const auto out = run_per_device(backend, mesh, as_args(inputs), 2,
                                  [&](Context& ctx, const Values& in) -> Values {
                                    return {ctx.pmean(in[0], axes), ctx.psum(in[0], axes)};
                                  });
  for (const Values& device : out) {
    const Array& mean = device[0];
    const Array sum = is_floating(dtype) ? device[1] : convert(device[1], DType::float32);
    RC_ASSERT(mean.dtype() == sum.dtype());
    RC_ASSERT(mean.shape() == sum.shape());
    Array expected(sum.dtype(), sum.shape());
    visit_dtype(sum.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, double>) {
        const double r = 1.0 / n;
        for (std::size_t i = 0; i < expected.values<T>().size(); ++i) {
          expected.mutable_values<T>()[i] = sum.values<T>()[i] * r;
        }
      } else if constexpr (std::is_same_v<T, float>) {
        const float r = 1.0f / static_cast<float>(n);
        for (std::size_t i = 0; i < expected.values<T>().size(); ++i) {
          expected.mutable_values<T>()[i] = sum.values<T>()[i] * r;
        }
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        // XLA carries bfloat16 arithmetic in float32: a float32 reciprocal, one rounding at the
        // end (found by running JAX 0.10.2, docs/jax-differences.md).
        const float r = 1.0f / static_cast<float>(n);
        for (std::size_t i = 0; i < expected.values<T>().size(); ++i) {
          expected.mutable_values<T>()[i] = T::from_float(sum.values<T>()[i].to_float() * r);
        }
      } else if constexpr (std::is_same_v<T, Float16>) {
        // RN_T(1/n) via float is exact for n <= 16 (no tie at float precision).
        const T r = T::from_float(1.0f / static_cast<float>(n));
        for (std::size_t i = 0; i < expected.values<T>().size(); ++i) {
          expected.mutable_values<T>()[i] =
              T::from_float(sum.values<T>()[i].to_float() * r.to_float());
        }
      }
    });
    RC_ASSERT(bits_equal(mean, expected));
  }
}

RC_GTEST_PROP(CollectiveProperties, bool_psum_is_int32_count, ()) {
  const Mesh mesh = *testkit::mesh();
  const auto axes = *testkit::axis_subset(mesh);
  const Shape shape = *testkit::shape();
  const auto inputs =
      random_per_device(DType::bool_, shape, mesh.device_count(), *testkit::seed());
  ReferenceBackend backend;
  const auto out = run_per_device(
      backend, mesh, as_args(inputs), 1,
      [&](Context& ctx, const Values& in) -> Values { return {ctx.psum(in[0], axes)}; });
  for (int d = 0; d < mesh.device_count(); ++d) {
    const Array& got = out[static_cast<std::size_t>(d)][0];
    RC_ASSERT(got.dtype() == DType::int32);
    RC_ASSERT(got.shape() == shape);
    std::vector<std::int32_t> count(static_cast<std::size_t>(element_count(shape)), 0);
    for (int member : group_members(mesh, axes, d)) {
      const auto v = inputs[static_cast<std::size_t>(member)].values<bool>();
      for (std::size_t i = 0; i < count.size(); ++i) count[i] += v[i] ? 1 : 0;
    }
    RC_ASSERT(bits_equal(got, Array::from_values<std::int32_t>(shape, count)));
  }
}

// ---- Group order

RC_GTEST_PROP(CollectiveProperties, axis_index_over_several_axes_equals_combined_index, ()) {
  const Mesh mesh = *testkit::mesh();
  const auto axes = *testkit::axis_subset(mesh);
  ReferenceBackend backend;
  std::vector<Values> no_args(static_cast<std::size_t>(mesh.device_count()));
  const auto out =
      run_per_device(backend, mesh, no_args, 2, [&](Context& ctx, const Values&) -> Values {
        return {ctx.axis_index(axes), scalar_i32(ctx.axis_size(axes))};
      });
  for (int d = 0; d < mesh.device_count(); ++d) {
    RC_ASSERT(
        bits_equal(out[static_cast<std::size_t>(d)][0], scalar_i32(combined_index(mesh, axes, d))));
    RC_ASSERT(bits_equal(out[static_cast<std::size_t>(d)][1], scalar_i32(group_size(mesh, axes))));
  }
}

// E10: all_gather(v, ('y', 'x')) lists the group by the combined index of the axes as named.
RC_GTEST_PROP(CollectiveProperties, all_gather_order_follows_the_listed_axis_order, ()) {
  const Mesh mesh = *testkit::mesh();
  const auto axes = *testkit::axis_subset(mesh);
  const DType dtype = *testkit::dtype_of(testkit::all_dtypes());
  const Shape shape = *testkit::shape(0, 2);
  const int axis =
      *rc::gen::inRange(-static_cast<int>(shape.size()) - 1, static_cast<int>(shape.size()) + 1);
  const auto inputs =
      random_per_device(dtype, shape, mesh.device_count(), *testkit::seed());
  ReferenceBackend backend;
  const auto out = run_per_device(backend, mesh, as_args(inputs), 1,
                                  [&](Context& ctx, const Values& in) -> Values {
                                    return {ctx.all_gather(in[0], axes, axis)};
                                  });
  const int stacked = axis < 0 ? axis + static_cast<int>(shape.size()) + 1 : axis;
  for (int d = 0; d < mesh.device_count(); ++d) {
    const auto members = group_members(mesh, axes, d);
    const Array& got = out[static_cast<std::size_t>(d)][0];
    RC_ASSERT(got.dim(stacked) == static_cast<std::int64_t>(members.size()));
    for (std::size_t k = 0; k < members.size(); ++k) {
      RC_ASSERT(bits_equal(take(got, stacked, static_cast<std::int64_t>(k)),
                           inputs[static_cast<std::size_t>(members[k])]));
    }
  }
}

RC_GTEST_PROP(CollectiveProperties, psum_scatter_untiled_equals_take_of_psum_at_rank, ()) {
  const Mesh mesh = *testkit::mesh();
  // On one device XLA removes the psum but not the psum_scatter, which folds -0.0 to +0.0.
  RC_PRE(mesh.device_count() > 1);
  const auto axes = *testkit::axis_subset(mesh);
  const int n = group_size(mesh, axes);
  // XLA:CPU's reduce-scatter folds each block as its all-reduce does, so floats match too.
  std::vector<DType> dtypes = testkit::integer_dtypes();
  for (DType f : testkit::float_dtypes()) dtypes.push_back(f);
  const DType dtype = *testkit::dtype_of(dtypes);
  const int rank = *rc::gen::inRange(1, 4);
  const int dim = *rc::gen::inRange(0, rank);
  const Shape shape = testkit::shape_with_multiple(rank, dim, n, 1);
  const auto inputs =
      random_per_device(dtype, shape, mesh.device_count(), *testkit::seed());
  ReferenceBackend backend;
  const auto out = run_per_device(
      backend, mesh, as_args(inputs), 3, [&](Context& ctx, const Values& in) -> Values {
        return {ctx.psum_scatter(in[0], axes, dim), ctx.psum(in[0], axes), ctx.axis_index(axes)};
      });
  for (const Values& device : out) {
    const std::int32_t r = device[2].values<std::int32_t>()[0];
    RC_ASSERT(bits_equal(device[0], take(device[1], dim, r)));
  }
}

// axis_index_groups: rank k of a group is its k-th listed index (docs/jax-checklist.md#group-order,
// conformance table row 6).
RC_GTEST_PROP(CollectiveProperties, all_gather_with_axis_index_groups_gathers_in_listed_order, ()) {
  const Mesh mesh = *testkit::mesh();
  const auto axes = *testkit::axis_subset(mesh);
  const int n = group_size(mesh, axes);
  std::vector<int> divisors;
  for (int g = 1; g <= n; ++g) {
    if (n % g == 0) divisors.push_back(g);
  }
  const int size = *rc::gen::elementOf(divisors);
  const std::vector<int> order = *testkit::permutation(n);
  AxisIndexGroups groups(static_cast<std::size_t>(n / size));
  for (int i = 0; i < n; ++i) {
    groups[static_cast<std::size_t>(i / size)].push_back(order[static_cast<std::size_t>(i)]);
  }
  const DType dtype = *testkit::dtype_of(testkit::all_dtypes());
  const Shape shape = *testkit::shape(0, 2);
  const auto inputs =
      random_per_device(dtype, shape, mesh.device_count(), *testkit::seed());
  ReferenceBackend backend;
  const auto out = run_per_device(
      backend, mesh, as_args(inputs), 1, [&](Context& ctx, const Values& in) -> Values {
        return {ctx.all_gather(in[0], axes, 0, /*tiled=*/false, groups)};
      });
  for (int d = 0; d < mesh.device_count(); ++d) {
    const auto outer_group = group_members(mesh, axes, d);  // by combined index
    const int index = combined_index(mesh, axes, d);
    const auto& listed = *std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return std::find(g.begin(), g.end(), index) != g.end();
    });
    const Array& got = out[static_cast<std::size_t>(d)][0];
    RC_ASSERT(got.dim(0) == size);
    for (std::size_t k = 0; k < listed.size(); ++k) {
      const int source = outer_group[static_cast<std::size_t>(listed[k])];
      RC_ASSERT(bits_equal(take(got, 0, static_cast<std::int64_t>(k)),
                           inputs[static_cast<std::size_t>(source)]));
    }
  }
}

// ---- pmap

// pmap over n devices = shard_map over a one-axis mesh with the mapped axis squeezed: psum and
// all_gather see the same groups.
RC_GTEST_PROP(CollectiveProperties, pmap_psum_and_all_gather_match_the_mapped_slices, ()) {
  const int n = *rc::gen::inRange(1, 9);
  const DType dtype = *testkit::dtype_of(testkit::integer_dtypes());
  Shape shape = *testkit::shape(0, 2);
  shape.insert(shape.begin(), n);
  const Array x = random_array(dtype, shape, *testkit::seed());
  ReferenceBackend backend;
  PmapOptions options;
  options.axis_name = "i";
  const Values out = run_pmap(backend,
                              [](Context& ctx, const Values& in) -> Values {
                                return {ctx.psum(in[0], "i"), ctx.all_gather(in[0], "i")};
                              },
                              options, {x});
  Array total = take(x, 0, 0);
  for (int d = 1; d < n; ++d) total = add(total, take(x, 0, d));
  for (int d = 0; d < n; ++d) {
    RC_ASSERT(bits_equal(take(out[0], 0, d), total));
    RC_ASSERT(bits_equal(take(out[1], 0, d), x));
  }
}

// ---- Determinism

// A random program of collectives (shapes kept) under a random declared order.
RC_GTEST_PROP(CollectiveProperties, running_the_same_program_twice_gives_identical_bits, ()) {
  const Mesh mesh = *testkit::mesh();
  const DType dtype = *testkit::dtype_of(testkit::float_dtypes());
  struct Step {
    int op;
    std::vector<std::string> axes;
    std::vector<std::pair<int, int>> perm;
  };
  std::vector<Step> program;
  const int steps = *rc::gen::inRange(1, 7);
  int lcm_of_groups = 1;
  for (int s = 0; s < steps; ++s) {
    Step step{*rc::gen::inRange(0, 7), *testkit::axis_subset(mesh), {}};
    if (step.op == 4) step.axes = testkit::in_mesh_order(mesh, step.axes);  // ppermute
    const int n = group_size(mesh, step.axes);
    lcm_of_groups = std::lcm(lcm_of_groups, n);
    const auto sigma = *testkit::permutation(n);
    for (int i = 0; i < n; ++i) step.perm.emplace_back(i, sigma[static_cast<std::size_t>(i)]);
    program.push_back(std::move(step));
  }
  const Shape shape = {lcm_of_groups, *rc::gen::inRange<std::int64_t>(1, 3)};
  const auto inputs =
      random_per_device(dtype, shape, mesh.device_count(), *testkit::seed());
  // Any algorithm with small chunks, in its default ring (group sizes vary from step to step, and
  // gloo_bcube is not modelled for all of them).
  ReductionOrder order = *testkit::reduction_order(1);
  order.ring.clear();
  if (order.algorithm == ReductionAlgorithm::gloo_bcube)
    order.algorithm = ReductionAlgorithm::xla_cpu;
  const auto run = [&] {
    ReferenceBackend backend(order);
    return run_per_device(
        backend, mesh, as_args(inputs), 1,
        [&](Context& ctx, const Values& in) -> Values {
          Array x = in[0];
          for (const Step& step : program) {
            switch (step.op) {
              case 0: x = ctx.psum(x, step.axes); break;
              case 1: x = ctx.pmean(x, step.axes); break;
              case 2: x = ctx.pmax(x, step.axes); break;
              case 3: x = ctx.pmin(x, step.axes); break;
              case 4: x = ctx.ppermute(x, step.axes, step.perm); break;
              case 5: x = ctx.all_to_all(x, step.axes, 0, 0, /*tiled=*/true); break;
              default:
                x = ctx.all_gather(ctx.psum_scatter(x, step.axes, 0, true), step.axes, 0, true);
            }
          }
          return {x};
        },
        // Unchecked types: a psum over axes the value varies over only in part (after an
        // earlier reduction) is a typing error under check_vma, and this law is about the bits.
        /*check_vma=*/false);
  };
  const auto first = run();
  const auto second = run();
  for (std::size_t d = 0; d < first.size(); ++d) RC_ASSERT(bits_equal(first[d][0], second[d][0]));
}

}  // namespace
}  // namespace spmd
