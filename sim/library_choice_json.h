#pragma once
// A library choice (cost_model::LibraryChoice) read from a JSON object: a machine file's fabric
// section names its fields "algorithm" and "protocol", a workload call "nccl_algo" and
// "nccl_proto". Either may be absent; a name that is none is an error naming the field.

#include <string_view>

#include "cost_model/collective_timing.h"
#include "support/json_reader.h"

namespace spmd::sim {

struct LibraryChoiceFields {
  std::string_view algorithm;
  std::string_view protocol;
};

cost_model::LibraryChoice library_choice_from_json(const JsonValue& object,
                                                   LibraryChoiceFields fields);

}  // namespace spmd::sim
