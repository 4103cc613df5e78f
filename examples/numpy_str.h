#pragma once
// Arrays printed as NumPy's str() prints them (print(x) in the JAX tutorials): nested brackets,
// one row per line, elements padded to a common width, floats in NumPy's default 'maxprec' mode
// (shortest round-trip digits, at most 8 after the point, "0." for whole numbers, scientific
// notation when values span more than 1e3 or reach 1e8), lines wrapped at 75 characters. This
// lets the examples print output that can be compared with the tutorials line by line.

#include <string>

#include "reference/array.h"

namespace spmd {

// NumPy's str(x). A rank-0 array prints as its scalar ("42.0", "7", "True"). float16 and
// bfloat16 values are printed with float32's digits (NumPy would print fewer for float16).
std::string numpy_str(const Array& array);

// One float as NumPy prints a float32 scalar: shortest round-trip digits, "42.0" for whole
// numbers. Used for losses and other scalars the examples print.
std::string numpy_scalar_str(float value);

}  // namespace spmd
