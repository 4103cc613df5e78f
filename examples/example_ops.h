#pragma once
// The few jax.numpy operations the tutorial examples need beyond reference/elementwise.h:
// arange, division, sums along an axis, a 2-d dot. float32 only, each result rounded once per
// operation, sums folded left to right (the examples sum small integers or few terms, where the
// order cannot change the result). Results keep the union of their inputs' varying axes, so
// shard_map's check_vma sees through them as it sees through jnp operations.

#include <cstdint>

#include "reference/array.h"

namespace spmd {

// jnp.arange(count, dtype=float32).reshape(shape), times `scale`.
Array arange_f32(Shape shape, float scale = 1.0f);
// jnp.arange(count, dtype=int32).reshape(shape).
Array arange_i32(Shape shape);
// jnp.full(shape, value, dtype=float32).
Array full_f32(Shape shape, float value);

// a / b for float32; b has a's shape or is a scalar.
Array divide(const Array& a, const Array& b);
// a * factor (a float32 scalar broadcast).
Array scale(const Array& a, float factor);
// jnp.sum(a, axis) for float32, optionally keeping the axis with size 1.
Array sum_axis(const Array& a, int axis, bool keepdims = false);
// jnp.sum(a) for float32: a scalar.
Array sum_all(const Array& a);
// jnp.dot(a, b) for 2-d float32 arrays.
Array dot(const Array& a, const Array& b);

// Whether every slice along axis 0 of `stacked` is bit-identical to the first: how the examples
// check that pmap replicas agree.
bool replicas_bit_identical(const Array& stacked);

}  // namespace spmd
