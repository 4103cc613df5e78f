#pragma once
// JSON fields whose values carry units (docs/machine-format.md, "Units"): a string with a unit
// ("80GiB", "100GB/s", "1.5us", "989TFLOP/s") or, where a bare number is unambiguous, a number
// in the base unit. Errors name the field's path, as every JsonValue error does.

#include <cstdint>

#include "support/json_reader.h"

namespace spmd {

std::int64_t bytes_from_json(const JsonValue& value);        // "80GiB" or bytes
std::int64_t bandwidth_from_json(const JsonValue& value);    // "100GB/s" or bytes/s
std::int64_t duration_ps_from_json(const JsonValue& value);  // "1.5us"; no bare numbers
double flops_per_s_from_json(const JsonValue& value);        // "989TFLOP/s" or FLOP/s

}  // namespace spmd
