#include "reference/context.h"

#include "reference/collective_groups.h"
#include "reference/collective_semantics.h"
#include "reference/elementwise.h"
#include "reference/reduction_dtype.h"

namespace spmd {
namespace {

CollectiveCall reduction(CollectiveOp op, const AxisNames& axes, Context::Groups groups) {
  CollectiveCall call;
  call.op = op;
  call.axes = axes;
  call.axis_index_groups = std::move(groups);
  return call;
}

// An all-reduce in a program of one device: XLA replaces it by its operand (AllReduceSimplifier,
// and pmean's multiply by 1 is removed), so -0.0, NaN payloads and subnormals keep their bits;
// only the type changes as the collective's does. psum_scatter is not simplified and folds.
Array single_device_all_reduce(CollectiveOp op, const Array& x) {
  const Array result = convert(x, reduction_dtype(op, x.dtype()));
  if (op != CollectiveOp::pmean) return result;
  return pmean_from_sum(result, 1, kIeeeNumerics);  // n == 1: only the float type
}

}  // namespace

Array Context::collective(const CollectiveCall& call, const Array& x) {
  validate_collective(call, mesh_, x, check_vma_);
  const VaryingAxes varying = result_varying_axes(call, mesh_, x.varying_axes());
  if (call.axes.names.empty() && call.op != CollectiveOp::ppermute &&
      call.op != CollectiveOp::pshuffle && call.op != CollectiveOp::all_to_all) {
    return x;  // JAX: an empty axis tuple leaves x unchanged
  }
  if (mesh_.device_count() == 1 && is_all_reduce(call.op)) {
    return single_device_all_reduce(call.op, x.as_stored()).with_varying_axes(varying);
  }
  const bool sums = call.op == CollectiveOp::psum || call.op == CollectiveOp::pmean ||
                    call.op == CollectiveOp::psum_scatter;
  if (const Array* unrounded = x.unrounded_f32(); unrounded != nullptr && sums) {
    return sum_unrounded_bf16(call, *unrounded).with_varying_axes(varying);
  }
  // Collectives move and reduce the stored (rounded) elements; a backend that hands an input
  // array on unchanged (a permute) must not hand its float32 values on with it.
  return run_collective(call, x.as_stored()).with_varying_axes(varying);
}

// XLA:CPU promotes a bfloat16 sum to float32 (AllReducePromotion) and, with excess precision,
// feeds it the float32 values of the add / sub / mul before it: the float32 sum of `unrounded`,
// rounded once to bfloat16. pmean rounds the sum, then scales it as for any bfloat16 sum.
Array Context::sum_unrounded_bf16(const CollectiveCall& call, const Array& unrounded) {
  CollectiveCall sum = call;
  if (call.op == CollectiveOp::pmean) sum.op = CollectiveOp::psum;
  const Array rounded = convert(run_collective(sum, unrounded), DType::bfloat16);
  if (call.op != CollectiveOp::pmean) return rounded;
  return pmean_from_sum(rounded, collective_axis_size(mesh_, call), numerics_);
}

void Context::collective_cost(const CollectiveCall& call, DType dtype, const Shape& shape) {
  validate_collective(call, mesh_, dtype, shape, check_vma_);
  if (call.axes.names.empty() && call.op != CollectiveOp::ppermute &&
      call.op != CollectiveOp::pshuffle && call.op != CollectiveOp::all_to_all) {
    return;  // as in collective(): nothing to do
  }
  run_collective_cost(call, dtype, shape);
}

Array Context::psum(const Array& x, const AxisNames& axes, Groups groups) {
  return collective(reduction(CollectiveOp::psum, axes, std::move(groups)), x);
}
Array Context::pmean(const Array& x, const AxisNames& axes, Groups groups) {
  return collective(reduction(CollectiveOp::pmean, axes, std::move(groups)), x);
}
Array Context::pmax(const Array& x, const AxisNames& axes, Groups groups) {
  return collective(reduction(CollectiveOp::pmax, axes, std::move(groups)), x);
}
Array Context::pmin(const Array& x, const AxisNames& axes, Groups groups) {
  return collective(reduction(CollectiveOp::pmin, axes, std::move(groups)), x);
}

Array Context::all_gather(const Array& x, const AxisNames& axes, int axis, bool tiled,
                          Groups groups) {
  CollectiveCall call = reduction(CollectiveOp::all_gather, axes, std::move(groups));
  call.axis = axis;
  call.tiled = tiled;
  return collective(call, x);
}

Array Context::all_gather_invariant(const Array& x, const AxisNames& axes, int axis,
                                    bool tiled) {
  CollectiveCall call = reduction(CollectiveOp::all_gather, axes, std::nullopt);
  call.axis = axis;
  call.tiled = tiled;
  call.to_invariant = true;
  return collective(call, x);
}

Array Context::psum_scatter(const Array& x, const AxisNames& axes, int scatter_dimension,
                            bool tiled, Groups groups) {
  CollectiveCall call = reduction(CollectiveOp::psum_scatter, axes, std::move(groups));
  call.axis = scatter_dimension;
  call.tiled = tiled;
  return collective(call, x);
}

Array Context::all_to_all(const Array& x, const AxisNames& axes, int split_axis, int concat_axis,
                          bool tiled, Groups groups) {
  CollectiveCall call = reduction(CollectiveOp::all_to_all, axes, std::move(groups));
  call.split_axis = split_axis;
  call.concat_axis = concat_axis;
  call.tiled = tiled;
  return collective(call, x);
}

Array Context::ppermute(const Array& x, const AxisNames& axes,
                        std::vector<std::pair<int, int>> perm) {
  CollectiveCall call = reduction(CollectiveOp::ppermute, axes, std::nullopt);
  call.perm = std::move(perm);
  return collective(call, x);
}

Array Context::pshuffle(const Array& x, const AxisNames& axes, std::vector<int> perm) {
  CollectiveCall call = reduction(CollectiveOp::pshuffle, axes, std::nullopt);
  call.shuffle = std::move(perm);
  return collective(call, x);
}

Array Context::axis_index(const AxisNames& axes) {
  CollectiveCall call = reduction(CollectiveOp::axis_index, axes, std::nullopt);
  const VaryingAxes varying = result_varying_axes(call, mesh_, 0);
  return axis_index_value(mesh_, axes, device_).with_varying_axes(varying);
}

int Context::axis_size(const AxisNames& axes) const {
  resolve_axes(mesh_, axes, "axis_size");
  return collective_axis_size(mesh_, reduction(CollectiveOp::psum, axes, std::nullopt));
}

Values Context::each_leaf(const Values& xs, const CollectiveCall& call) {
  Values out;
  out.reserve(xs.size());
  for (const Array& x : xs) out.push_back(collective(call, x));
  return out;
}

Values Context::psum(const Values& xs, const AxisNames& axes, Groups groups) {
  return each_leaf(xs, reduction(CollectiveOp::psum, axes, std::move(groups)));
}
Values Context::pmean(const Values& xs, const AxisNames& axes, Groups groups) {
  return each_leaf(xs, reduction(CollectiveOp::pmean, axes, std::move(groups)));
}
Values Context::pmax(const Values& xs, const AxisNames& axes, Groups groups) {
  return each_leaf(xs, reduction(CollectiveOp::pmax, axes, std::move(groups)));
}
Values Context::pmin(const Values& xs, const AxisNames& axes, Groups groups) {
  return each_leaf(xs, reduction(CollectiveOp::pmin, axes, std::move(groups)));
}

}  // namespace spmd
