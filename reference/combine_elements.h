#pragma once
// One reduction step over raw buffers: out[i] = op(lhs[i], rhs[i]) for `count` elements stored as
// `dtype`, in the reference's element arithmetic (scalar_arithmetic.h: float16 / bfloat16 round
// once per step, integers wrap, bool sums are OR, max / min drop NaN as XLA:CPU does, ties keep
// lhs). For libraries that reduce buffers with a function we give them: Gloo's reduce function,
// an Open MPI user op, a plugin's host table. IEEE arithmetic, subnormals kept (the numerics of
// every library order, ReductionOrder::numerics). `out` may be `lhs` or `rhs`.

#include <cstddef>

#include "reference/dtype.h"
#include "reference/fold_reduce.h"

namespace spmd {

void combine_elements(DType dtype, ReduceOp op, const void* lhs, const void* rhs, void* out,
                      std::size_t count);

}  // namespace spmd
