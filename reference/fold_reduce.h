#pragma once
// Evaluates a reduction over a group's contributions in a given fold order (reduction_order.h):
// the reference's all-reduce and reduce-scatter arithmetic. Every element operation goes through
// spmd::arith (scalar_arithmetic.h), so float16 / bfloat16 round at each step and integers wrap;
// bfloat16 sums under an order with bf16_accumulates_in_f32() are carried in float32 and rounded
// once at the end.
// Under the order's numerics() (XLA:CPU's for xla_cpu) every operation flushes subnormal
// operands and results to signed zero.

#include <span>
#include <string_view>

#include "reference/array.h"
#include "reference/reduction_order.h"

namespace spmd {

enum class ReduceOp { sum, max, min };

std::string_view reduce_op_name(ReduceOp op);  // "sum", "max", "min"

// All-reduce of one contribution per group rank (same dtype and shape), folded per `order`'s
// all_reduce_plan. Every rank gets this same result. A bool sum is rejected: callers convert bool
// to int32 first, as JAX does for psum. The result's varying_axes are 0 (callers set them).
Array all_reduce(std::span<const Array> contributions, ReduceOp op, const ReductionOrder& order);

// Reduce `blocks` (one per group rank, same dtype / shape) with one fold tree over all their
// elements (used for reduce-scatter blocks with order.reduce_scatter_fold). `order` decides only
// whether bfloat16 sums are carried in float32. The tree's leaves must be ranks of `blocks`, and
// every node but the root must be an operand of exactly one later node.
Array reduce_with_tree(std::span<const Array> blocks, ReduceOp op, const FoldTree& tree,
                       const ReductionOrder& order);

// Reduce one contribution per group rank chunk by chunk in `plan` (chunks within the elements,
// in increasing order, not overlapping; elements outside every chunk are zero), e.g. a plan
// changed from order.all_reduce_plan to see what a wrong order gives. `order` decides only
// whether bfloat16 sums are carried in float32.
Array reduce_with_plan(std::span<const Array> contributions, ReduceOp op,
                       std::span<const ChunkFold> plan, const ReductionOrder& order);

}  // namespace spmd
