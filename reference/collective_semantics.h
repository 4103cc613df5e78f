#pragma once
// What each collective means: the checks JAX makes before running it, the result type, and the
// result on every device computed in one place from every device's input. The reference backend
// calls evaluate_collective directly; other backends must produce the same bits.

#include <vector>

#include "reference/array.h"
#include "reference/collective_call.h"
#include "reference/jax_version.h"
#include "reference/mesh.h"
#include "reference/reduction_order.h"

namespace spmd {

// Checks `call` on one device's input as JAX `jax_version` does, raising spmd::Error with JAX's
// message. `check_vma` is shard_map's flag: psum with axis_index_groups is not implemented under
// it, and psum (pmax / pmin too in 0.12) over axes the input varies over only in part is refused.
void validate_collective(const CollectiveCall& call, const Mesh& mesh, const Array& input,
                         bool check_vma, JaxVersion jax_version = kDefaultJaxVersion);
// The checks that read the input's dtype and shape alone (not its varying axes).
void validate_collective(const CollectiveCall& call, const Mesh& mesh, DType dtype,
                         const Shape& shape, bool check_vma,
                         JaxVersion jax_version = kDefaultJaxVersion);

// The varying-axes type of the result, given the input's: reductions over A make the result
// invariant along A; the others vary along A (inputs are implicitly pvary'd, as with
// jax_auto_pcast).
VaryingAxes result_varying_axes(const CollectiveCall& call, const Mesh& mesh, VaryingAxes input);

// Results on every device (index = device id), from every device's input. Float sums fold in
// `order` (psum, pmean, psum_scatter), whose ring lists the mesh's device ids: each group folds
// along that ring restricted to its members (ReductionOrder::for_group); everything else is
// exact data movement.
std::vector<Array> evaluate_collective(const CollectiveCall& call, const Mesh& mesh,
                                       const std::vector<Array>& inputs,
                                       const ReductionOrder& order);

// psum, pmean, pmax and pmin: the collectives whose every member gets the group's reduction.
bool is_all_reduce(CollectiveOp op);

// pmean from psum's result: sum * RN(1/n) (XLA rewrites x / n so), the reciprocal in float32 for
// bfloat16 (one rounding at the end); int and bool become float32. For n == 1 the sum itself
// (XLA removes a multiply by 1). The multiply rounds as `numerics` says.
Array pmean_from_sum(Array sum, int n, const FloatNumerics& numerics);

// axis_index(axes) on `device`: an int32 scalar, the combined index, first-named axis major.
Array axis_index_value(const Mesh& mesh, const AxisNames& axes, int device);

}  // namespace spmd
