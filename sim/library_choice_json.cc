#include "sim/library_choice_json.h"

namespace spmd::sim {

cost_model::LibraryChoice library_choice_from_json(const JsonValue& object,
                                                   LibraryChoiceFields fields) {
  cost_model::LibraryChoice choice;
  if (auto algorithm = object.optional(fields.algorithm)) {
    choice.algorithm =
        algorithm->named("a library algorithm", cost_model::library_algorithm_from_name);
  }
  if (auto protocol = object.optional(fields.protocol)) {
    choice.protocol = protocol->named("a protocol", cost_model::protocol_from_name);
  }
  return choice;
}

}  // namespace spmd::sim
