#pragma once
// Element-wise arithmetic on Arrays: add, sub, mul (two operands of one dtype, NumPy
// broadcasting), neg, and convert between dtypes. Rounding per element as in scalar_arithmetic.h.

#include "reference/array.h"

namespace spmd {

Array add(const Array& a, const Array& b);
Array sub(const Array& a, const Array& b);
Array mul(const Array& a, const Array& b);
Array neg(const Array& a);

// convert_element_type: floats to narrower floats round to nearest even (float64 -> float16 /
// bfloat16 rounds once, not twice); floats to integers truncate toward zero, NaN becomes 0 and
// out-of-range values saturate; to bool is `!= 0`; bool to a number is 0 or 1.
Array convert(const Array& a, DType dtype);

// The shape NumPy broadcasting gives two shapes, or an error naming both.
Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace spmd
