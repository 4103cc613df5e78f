#pragma once
// How Open MPI reduces elements of each dtype so that its arithmetic is the reference's: native
// datatypes and ops where MPI's C arithmetic is JAX's (float32 / float64 sums, integer sums that
// wrap, integer max / min), and otherwise a commutative user op (MPI_Op_create) over a contiguous
// byte datatype that combines elements with spmd::arith (reference/scalar_arithmetic.h):
// float16 / bfloat16 sums rounded at every step, JAX's NaN rules for float max / min, bool.

#include <mpi.h>

#include "reference/dtype.h"
#include "reference/fold_reduce.h"

namespace spmd::mpi {

struct Reduction {
  MPI_Datatype datatype;  // one element of the dtype
  MPI_Op op;
};

// Which operand a user op puts on the left, where max / min of +0.0 and -0.0 keep it: the
// received one (Open MPI's recursive doubling and linear reduce, and the ring's small-count
// fallback) or the process's own (Open MPI's ring all-reduce, found by experiment).
enum class LeftOperand { received, own };

// The datatype and op for `op` over `dtype`; user ops and datatypes are made on first use.
// spmd::Error for a sum of bool (callers convert bool to int32 first, as psum does).
Reduction reduction_for(DType dtype, ReduceOp op, LeftOperand left = LeftOperand::received);

// Frees the user ops and datatypes made so far; call before MPI_Finalize.
void free_reductions();

}  // namespace spmd::mpi
