#include "support/json_units.h"

#include <nlohmann/json.hpp>

#include "support/units.h"

namespace spmd {

std::int64_t bytes_from_json(const JsonValue& value) {
  if (value.is_number()) return parse_bytes(value.number_text(), value.path());
  return parse_bytes(value.string(R"(a size like "80GiB" or a number of bytes)"), value.path());
}

std::int64_t bandwidth_from_json(const JsonValue& value) {
  if (value.is_number()) return parse_bandwidth_bytes_per_s(value.number_text(), value.path());
  return parse_bandwidth_bytes_per_s(
      value.string(R"(a bandwidth like "100GB/s" or a number of bytes/s)"), value.path());
}

std::int64_t duration_ps_from_json(const JsonValue& value) {
  // A bare number could mean ps, ns or us depending on who wrote it.
  return parse_duration_ps(value.string(R"(a string with a unit like "1.5us" or "500ns")"),
                           value.path());
}

double flops_per_s_from_json(const JsonValue& value) {
  if (value.is_number()) {
    const double flops = value.json().get<double>();
    if (!(flops > 0)) value.fail_value(R"(a compute rate > 0 like "989TFLOP/s")");
    return flops;
  }
  return parse_flops(value.string(R"(a compute rate like "989TFLOP/s" or a number)"), value.path());
}

}  // namespace spmd
