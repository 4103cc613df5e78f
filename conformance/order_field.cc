#include "conformance/order_field.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "reference/error.h"
#include "support/name_lists.h"

namespace spmd::conformance {
namespace {

constexpr std::string_view kRing = "ring";
constexpr std::string_view kNcclChunk = "nccl_chunk_bytes";
constexpr std::string_view kGlooSegment = "gloo_max_segment_bytes";
constexpr std::string_view kTorusDims = "torus_dims";

bool uses(ReductionAlgorithm algorithm, std::string_view parameter) {
  const std::vector<std::string_view> used = order_parameters_used(algorithm);
  return std::find(used.begin(), used.end(), parameter) != used.end();
}

ReductionAlgorithm parse_algorithm(const JsonValue& value) {
  return value.named("a reduction order name", reduction_algorithm_from_name);
}

std::int64_t byte_count(const JsonValue& value) {
  return value.integer(1, std::int64_t{1} << 40, "a positive byte count");
}

}  // namespace

// What each algorithm reads (reference/reduction_order.h). halving_doubling and the tori read the
// NCCL ring's where they run it instead of their own (docs/reduction-orders.md).
std::vector<std::string_view> order_parameters_used(ReductionAlgorithm algorithm) {
  using enum ReductionAlgorithm;
  switch (algorithm) {
    case nccl_ring:
    case bidirectional_ring:
    case halving_doubling: return {kRing, kNcclChunk};
    case nccl_tree_chain:
    case binary_tree:
    case double_binary_tree: return {kRing};
    case torus:
    case bidirectional_torus: return {kRing, kNcclChunk, kTorusDims};
    case gloo_ring: return {kGlooSegment};
    default: return {};
  }
}

ReductionOrder parse_order(const JsonValue& value) {
  if (value.is_string()) return ReductionOrder{.algorithm = parse_algorithm(value)};
  value.require_object({"algorithm", kRing, kNcclChunk, kGlooSegment, kTorusDims});
  ReductionOrder order{.algorithm = parse_algorithm(value.required(
                           "algorithm", "a reduction order name such as nccl_ring"))};
  const std::vector<std::string_view> used = order_parameters_used(order.algorithm);
  for (const std::string_view parameter : {kRing, kNcclChunk, kGlooSegment, kTorusDims}) {
    const std::optional<JsonValue> field = value.optional(parameter);
    if (field && !uses(order.algorithm, parameter)) {
      field->fail(
          fmt::format("not used by {}, expected {}", reduction_algorithm_name(order.algorithm),
                      used.empty() ? std::string("no parameters") : "only " + comma_list(used)));
    }
  }
  if (const auto ring = value.optional(kRing)) {
    order.ring = ring->int32_list("a list of group ranks in ring order");
  }
  if (const auto dims = value.optional(kTorusDims)) {
    order.torus_dims = dims->int32_list("a list of torus dimension sizes");
  }
  if (const auto bytes = value.optional(kNcclChunk)) order.nccl_chunk_bytes = byte_count(*bytes);
  if (const auto bytes = value.optional(kGlooSegment)) {
    order.gloo_max_segment_bytes = byte_count(*bytes);
  }
  return order;
}

nlohmann::ordered_json order_json(const ReductionOrder& order) {
  const ReductionOrder defaults;
  nlohmann::ordered_json object;
  object["algorithm"] = reduction_algorithm_name(order.algorithm);
  const auto set = [&](std::string_view parameter, bool differs, const auto& value) {
    if (differs && uses(order.algorithm, parameter)) object[std::string(parameter)] = value;
  };
  set(kRing, !order.ring.empty(), order.ring);
  set(kNcclChunk, order.nccl_chunk_bytes != defaults.nccl_chunk_bytes, order.nccl_chunk_bytes);
  set(kGlooSegment, order.gloo_max_segment_bytes != defaults.gloo_max_segment_bytes,
      order.gloo_max_segment_bytes);
  set(kTorusDims, !order.torus_dims.empty(), order.torus_dims);
  if (object.size() == 1) return object["algorithm"];
  return object;
}

}  // namespace spmd::conformance
