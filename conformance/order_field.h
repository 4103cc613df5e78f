#pragma once
// The `order` field of a conformance case (docs/conformance-format.md): an algorithm name
// ("nccl_ring"), or an object with the algorithm and the parameters it uses
// ({"algorithm": "nccl_ring", "ring": [0, 2, 1, 3], "nccl_chunk_bytes": 64}).

#include <nlohmann/json_fwd.hpp>
#include <string_view>
#include <vector>

#include "reference/reduction_order.h"
#include "support/json_reader.h"

namespace spmd::conformance {

// The parameters `algorithm` reads ("ring", "nccl_chunk_bytes", "gloo_max_segment_bytes",
// "torus_dims"): the fields its object form may have besides "algorithm".
std::vector<std::string_view> order_parameters_used(ReductionAlgorithm algorithm);

// spmd::Error naming the field for an unknown algorithm, an unknown field, a field the algorithm
// does not use, or a bad value.
ReductionOrder parse_order(const JsonValue& value);

// The string form when no parameter is set, else the object with the parameters the algorithm
// uses that differ from the defaults; parse_order reads it back to the same order.
nlohmann::ordered_json order_json(const ReductionOrder& order);

}  // namespace spmd::conformance
