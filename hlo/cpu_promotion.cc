#include "hlo/cpu_promotion.h"

#include <fmt/format.h>

#include <array>
#include <string_view>

namespace spmd::hlo {
namespace {

constexpr std::array<std::string_view, 2> kNarrowTypes = {"bf16", "f16"};
// How many instructions a convert back may lie past the collective (tuple elements, copies,
// a promoted collective following this one).
constexpr int kMostSteps = 6;

bool all_f32(const HloShape& shape) {
  for (const HloShape* leaf : shape.leaves()) {
    if (leaf->element_type != "f32") return false;
  }
  return !shape.leaves().empty();
}

const HloComputation* fused(const HloModule& module, const HloInstruction& instruction) {
  if (instruction.opcode != "fusion" || instruction.attribute("calls") == nullptr) return nullptr;
  return &module.called_by("calls", instruction);
}

// `instruction` converts to `type`: a convert to it, or a fusion holding one.
bool converts_to(const HloModule& module, const HloInstruction& instruction,
                 std::string_view type) {
  if (instruction.opcode == "convert") return instruction.shape.element_type == type;
  const HloComputation* body = fused(module, instruction);
  if (body == nullptr) return false;
  for (const HloInstruction& inner : body->instructions) {
    if (inner.opcode == "convert" && inner.shape.element_type == type) return true;
  }
  return false;
}

// `instruction` converts from `type`: a convert of a value of it, or a fusion holding one.
bool converts_from(const HloModule& module, const HloComputation& computation,
                   const HloInstruction& instruction, std::string_view type) {
  const HloComputation* body = &computation;
  std::vector<const HloInstruction*> converts;
  if (instruction.opcode == "convert") {
    converts.push_back(&instruction);
  } else if ((body = fused(module, instruction)) != nullptr) {
    for (const HloInstruction& inner : body->instructions) {
      if (inner.opcode == "convert") converts.push_back(&inner);
    }
  } else {
    return false;
  }
  for (const HloInstruction* convert : converts) {
    if (convert->operands.empty()) continue;
    const HloInstruction* source = body->find(convert->operands[0]);
    if (source != nullptr && source->shape.element_type == type) return true;
  }
  return false;
}

bool is_passed_through(std::string_view opcode) {
  return opcode == "get-tuple-element" || opcode == "copy" || opcode == "bitcast" ||
         opcode == "all-reduce" || opcode == "reduce-scatter" || opcode == "all-gather";
}

// The result of `instruction` reaches a convert to `type` within `steps` users.
bool reaches_convert_to(const HloModule& module, const HloComputation& computation,
                        const HloInstruction& instruction, std::string_view type, int steps) {
  for (const HloInstruction& user : computation.instructions) {
    bool uses = false;
    for (const std::string& operand : user.operands) uses = uses || operand == instruction.name;
    if (!uses) continue;
    if (converts_to(module, user, type)) return true;
    if (steps > 0 && is_passed_through(user.opcode) &&
        reaches_convert_to(module, computation, user, type, steps - 1)) {
      return true;
    }
  }
  return false;
}

bool has_promoted_reduction(const HloInstruction& collective) {
  const std::string* to_apply = collective.attribute("to_apply");
  return to_apply != nullptr && to_apply->ends_with("_promoted");
}

}  // namespace

std::optional<std::string> cpu_promoted_type(const HloModule& module,
                                             const HloComputation& computation,
                                             const HloInstruction& collective) {
  const std::string_view op = collective.opcode;
  const bool reduces = op == "all-reduce" || op == "reduce-scatter";
  if (!(reduces || op == "all-gather") || !all_f32(collective.shape)) return std::nullopt;
  if (reduces && !has_promoted_reduction(collective)) return std::nullopt;
  for (std::string_view type : kNarrowTypes) {
    if (!reduces) {
      if (collective.operands.size() != 1) continue;
      const HloInstruction* operand = computation.find(collective.operands[0]);
      if (operand == nullptr || !converts_from(module, computation, *operand, type)) continue;
    }
    if (reaches_convert_to(module, computation, collective, type, kMostSteps)) {
      return std::string(type);
    }
  }
  return std::nullopt;
}

std::string cpu_promotion_note(const std::vector<ImportedCollective>& collectives,
                               CpuPromotion promotion) {
  std::int64_t promoted = 0;
  std::string type;
  for (const ImportedCollective& c : collectives) {
    if (c.cpu_promoted_from.empty()) continue;
    ++promoted;
    type = c.cpu_promoted_from;
  }
  if (promoted == 0) return "";
  return promotion == CpuPromotion::undo
             ? fmt::format("cpu promotion: {} collective{} XLA:CPU promoted from {} to f32, "
                           "timed in {} as the program has them (--keep-cpu-promotion: in f32)\n",
                           promoted, promoted == 1 ? "" : "s", type, type)
             : fmt::format("cpu promotion: {} collective{} XLA:CPU promoted from {} to f32, "
                           "timed in f32 as compiled (--keep-cpu-promotion)\n",
                           promoted, promoted == 1 ? "" : "s", type);
}

}  // namespace spmd::hlo
