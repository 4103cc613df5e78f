#pragma once
// The bool rules of the reduction collectives, in one place for the reference and the simulator:
// JAX converts bool to int32 before psum / pmean (so they sum in int32 and return int32), but
// not before psum_scatter, which rejects bool (lax.add does not accept it); pmax and pmin of bool
// are OR and AND. See docs/jax-checklist.md.

#include "reference/collective_call.h"
#include "reference/dtype.h"
#include "reference/fold_reduce.h"

namespace spmd {

// The element type a reduction collective (psum, pmean, pmax, pmin, psum_scatter) reduces
// elements of `input` in: int32 for psum / pmean of bool, else `input`. The other collectives
// reduce nothing and keep `input`.
DType reduction_dtype(CollectiveOp op, DType input);

// The operator a reduction collective reduces with: sum for psum, pmean and psum_scatter, max for
// pmax, min for pmin. Throws spmd::Error for the collectives that reduce nothing and for
// psum_scatter of bool.
ReduceOp reduction_op(CollectiveOp op, DType input);

}  // namespace spmd
