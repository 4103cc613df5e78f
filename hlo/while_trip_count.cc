#include "hlo/while_trip_count.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "reference/error.h"

namespace spmd::hlo {
namespace {

std::optional<std::int64_t> integer_text(const std::string& text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  std::int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

std::optional<std::int64_t> known_trip_count(const HloInstruction& while_loop) {
  const std::string* config = while_loop.attribute("backend_config");
  if (config == nullptr) return std::nullopt;
  const nlohmann::json json = nlohmann::json::parse(*config, nullptr, false);
  if (json.is_discarded() || !json.is_object() || !json.contains("known_trip_count")) return std::nullopt;
  const nlohmann::json& n = json["known_trip_count"].value("n", nlohmann::json());
  if (n.is_string()) return integer_text(n.get<std::string>());
  if (n.is_number_integer() && n.get<std::int64_t>() >= 0) return n.get<std::int64_t>();
  return std::nullopt;
}

// The integer a scalar constant holds ("s32[] constant(4)").
std::optional<std::int64_t> constant_value(const HloInstruction& instruction) {
  const std::string* literal = instruction.attribute("literal");
  if (instruction.opcode != "constant" || literal == nullptr) return std::nullopt;
  return integer_text(*literal);
}

// Element `index` of get-tuple-element(parameter(0)), or nullopt.
std::optional<std::int64_t> parameter_element(const HloComputation& computation,
                                              const HloInstruction& instruction) {
  if (instruction.opcode != "get-tuple-element" || instruction.operands.size() != 1) return std::nullopt;
  const HloInstruction* tuple = computation.find(instruction.operands[0]);
  const std::string* index = instruction.attribute("index");
  if (tuple == nullptr || tuple->opcode != "parameter" || index == nullptr) return std::nullopt;
  return integer_text(*index);
}

const HloInstruction* operand_at(const HloComputation& computation, const HloInstruction& at,
                                 std::size_t i) {
  return i < at.operands.size() ? computation.find(at.operands[i]) : nullptr;
}

std::optional<std::int64_t> counted_loop_trips(const HloModule& module,
                                               const HloComputation& computation,
                                               const HloInstruction& while_loop) {
  const HloComputation& condition = module.called_by("condition", while_loop);
  const HloComputation& body = module.called_by("body", while_loop);
  const HloInstruction& compare = condition.root();
  const std::string* direction = compare.attribute("direction");
  if (compare.opcode != "compare" || direction == nullptr || *direction != "LT") return std::nullopt;
  const HloInstruction* counter = operand_at(condition, compare, 0);
  const HloInstruction* limit = operand_at(condition, compare, 1);
  if (counter == nullptr || limit == nullptr) return std::nullopt;
  const std::optional<std::int64_t> index = parameter_element(condition, *counter);
  const std::optional<std::int64_t> end = constant_value(*limit);
  if (!index || !end) return std::nullopt;
  // The body adds 1 to element `index`.
  const HloInstruction& next = body.root();
  if (next.opcode != "tuple") return std::nullopt;
  const HloInstruction* increment = operand_at(body, next, static_cast<std::size_t>(*index));
  if (increment == nullptr || increment->opcode != "add") return std::nullopt;
  const HloInstruction* a = operand_at(body, *increment, 0);
  const HloInstruction* b = operand_at(body, *increment, 1);
  if (a == nullptr || b == nullptr || parameter_element(body, *a) != index ||
      constant_value(*b) != std::optional<std::int64_t>(1)) {
    return std::nullopt;
  }
  // The loop starts at a constant.
  const HloInstruction* init = operand_at(computation, while_loop, 0);
  if (init == nullptr || init->opcode != "tuple") return std::nullopt;
  const HloInstruction* start = operand_at(computation, *init, static_cast<std::size_t>(*index));
  const std::optional<std::int64_t> first = start == nullptr ? std::nullopt : constant_value(*start);
  if (!first) return std::nullopt;
  return std::max<std::int64_t>(0, *end - *first);
}

}  // namespace

std::int64_t while_trip_count(const HloModule& module, const HloComputation& computation,
                              const HloInstruction& while_loop) {
  if (const std::optional<std::int64_t> known = known_trip_count(while_loop)) return *known;
  if (const std::optional<std::int64_t> counted = counted_loop_trips(module, computation, while_loop)) {
    return *counted;
  }
  module.fail(while_loop,
              fmt::format("{} (while): no trip count, expected backend_config "
                          "{{\"known_trip_count\":{{\"n\":\"N\"}}}} or a counted loop "
                          "(condition compare(get-tuple-element(param, i), constant(N)), "
                          "direction=LT; body adding constant(1) to element i; a constant start)",
                          while_loop.name));
}

}  // namespace spmd::hlo
