#pragma once
// Writing an order case (order_case_data.h) as a conformance case: NAME.json, NAME.in0.npy and
// NAME.out0.npy in one folder (docs/conformance-format.md).

#include <string>

#include "conformance/order_case_data.h"

namespace spmd::conformance {

// Writes the case's files into `folder` (which must exist), replacing files of the same names;
// returns the JSON's path. spmd::Error naming the file when one cannot be written.
std::string write_order_case(const OrderCase& c, const std::string& folder);

}  // namespace spmd::conformance
