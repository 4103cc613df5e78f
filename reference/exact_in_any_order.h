#pragma once
// Whether a reduction gives the same bits in every fold order: the data on which a reduction
// whose order nobody documents (in_switch, reference/reduction_order.h) still has defined bits.
// See docs/reduction-orders.md, "In-switch reductions".
//
// A float sum is exact in any order when every partial sum is representable. Sufficient, and
// what is checked: with g the largest power of two dividing every nonzero value, every partial
// sum is a multiple of g no larger than sum |x|; so when sum |x| < 2^p * g (p the dtype's
// significand precision), sum |x| is finite in the dtype and g is a normal number, every partial
// sum is representable and no addition rounds. float16 / bfloat16 sums carried wider (in float32)
// are then exact too. Besides: every value finite, and not every value -0.0 (a fold from the
// identity +0.0 gives +0.0, one without it -0.0). Max / min pick one of their operands: the same
// in any order unless a NaN is among them or the extreme is a zero present with both signs
// (ties keep the accumulator). For every float op no value may be subnormal: XLA:CPU flushes
// subnormal operands, other platforms keep them. Integer sums wrap, which is associative: always
// exact, as are bool max / min.

#include <cstdint>
#include <optional>
#include <span>

#include "reference/array.h"
#include "reference/dtype.h"
#include "reference/fold_reduce.h"

namespace spmd {

// One element's reduction: `values` (one per group rank, each a value of `dtype` held exactly as
// a double) reduced with `op` in `dtype` gives the same bits in every order, by the test above.
bool exact_in_any_order(DType dtype, ReduceOp op, std::span<const double> values);

// The reduction of `contributions` (one per group rank, same dtype and shape) element by element:
// the flat index of the first element that exact_in_any_order refuses, or none.
std::optional<std::int64_t> first_element_not_exact_in_any_order(
    std::span<const Array> contributions, ReduceOp op);

}  // namespace spmd
