#pragma once
// Where two arrays first differ, bit for bit (NaN payloads aside), in words a reader can act on:
// "element (3, 1) is 1.50000012, expected 1.5". The conformance runner, the testing kit
// (testing/check_against_reference.h) and the GPU backends' tests report differences this way.

#include <cstdint>
#include <optional>
#include <string>

#include "reference/array.h"

namespace spmd {

// The flat (row-major) index of the first element whose bits differ, NaN payloads aside, or
// nothing when every element is equal. The arrays must have the same dtype and shape.
std::optional<std::int64_t> first_differing_element(const Array& got, const Array& expected);

// The index of flat element `flat` of an array of `shape`, one coordinate per dimension.
Shape element_index(const Shape& shape, std::int64_t flat);

// The first difference between two arrays, in words ("element (3,) is 10, expected 11", or
// "is float32[2], expected float32[3]" when their types differ), or nothing when they are equal.
std::optional<std::string> first_difference(const Array& got, const Array& expected);

}  // namespace spmd
