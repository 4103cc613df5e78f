#pragma once
// Element-wise arithmetic on Arrays: add, sub, mul (two operands of one dtype, NumPy
// broadcasting), neg, and convert between dtypes. Rounding per element as in scalar_arithmetic.h,
// under the platform's FloatNumerics: float16 and bfloat16 compute in float32 and round once;
// with flush_subnormals, float32 / bfloat16 / float64 operands and results that are subnormal
// become zeros of their sign; with bf16_excess_precision a bfloat16 result keeps its float32
// values (Array::unrounded_f32).

#include "reference/array.h"
#include "reference/float_numerics.h"

namespace spmd {

Array add(const Array& a, const Array& b, const FloatNumerics& numerics = kIeeeNumerics);
Array sub(const Array& a, const Array& b, const FloatNumerics& numerics = kIeeeNumerics);
Array mul(const Array& a, const Array& b, const FloatNumerics& numerics = kIeeeNumerics);
Array neg(const Array& a);  // a sign flip: exact, subnormals and NaN payloads kept

// convert_element_type: floats to narrower floats round to nearest even (float64 -> float16 /
// bfloat16 rounds once, not twice); floats to integers truncate toward zero, NaN becomes 0 and
// out-of-range values saturate; to bool is `!= 0`; bool to a number is 0 or 1. Subnormals keep
// their bits. A bfloat16 array with unrounded_f32 values converts to float32 as those values
// (XLA removes the bfloat16 round trip) and to bfloat16 as itself; to anything else from its
// rounded values.
Array convert(const Array& a, DType dtype);

// The shape NumPy broadcasting gives two shapes, or an error naming both.
Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace spmd
