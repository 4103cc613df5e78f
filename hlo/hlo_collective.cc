#include "hlo/hlo_collective.h"

#include <fmt/format.h>

#include <numeric>

#include "hlo/cpu_promotion.h"
#include "hlo/hlo_cost.h"
#include "reference/error.h"

namespace spmd::hlo {
namespace {

struct Operands {
  std::vector<const HloShape*> arrays;
  std::int64_t bytes = 0;
  std::int64_t elements = 0;
};

Operands operands_of(const HloModule& module, const HloComputation& computation,
                     const HloInstruction& instruction) {
  Operands operands;
  for (std::size_t i = 0; i < instruction.operands.size(); ++i) {
    for (const HloShape* leaf : module.operand(computation, instruction, i).shape.leaves()) {
      operands.arrays.push_back(leaf);
      operands.bytes += leaf->bytes();
      operands.elements += leaf->element_count();
    }
  }
  if (operands.arrays.empty()) {
    module.fail(instruction, fmt::format("{} ({}): expected at least one operand", instruction.name,
                                         instruction.opcode));
  }
  return operands;
}

std::optional<bool> boolean_attribute(const HloModule& module, const HloInstruction& at,
                                      std::string_view key) {
  const std::string* value = at.attribute(key);
  if (value == nullptr) return std::nullopt;
  if (*value == "true") return true;
  if (*value == "false") return false;
  module.fail(at, fmt::format("{} ({}): {}={}, expected true or false", at.name, at.opcode, key, *value));
}

// The op's dimension (all-gather, reduce-scatter, array all-to-all), or nullopt (tuple all-to-all).
std::optional<int> dimension_of(const HloModule& module, const HloInstruction& at) {
  const std::string* value = at.attribute("dimensions");
  if (value == nullptr) return std::nullopt;
  const std::optional<std::vector<std::int64_t>> dims = attribute_integers(*value);
  if (!dims || dims->size() != 1) {
    module.fail(at, fmt::format("{} ({}): dimensions={}, expected one dimension such as {{0}}",
                                at.name, at.opcode, *value));
  }
  return static_cast<int>((*dims)[0]);
}

CollectiveOp reduction_op(const HloModule& module, const HloInstruction& at) {
  const std::string& root = module.called_by("to_apply", at).root().opcode;
  if (root == "maximum") return CollectiveOp::pmax;
  if (root == "minimum") return CollectiveOp::pmin;
  return CollectiveOp::psum;  // add, and any other reduction: the same data movement and time
}

bool is_everyone_in_order(const DeviceGroups& groups, int devices) {
  if (groups.size() != 1 || static_cast<int>(groups[0].size()) != devices) return false;
  for (int i = 0; i < devices; ++i) {
    if (groups[0][static_cast<std::size_t>(i)] != i) return false;
  }
  return true;
}

DeviceGroups device_groups(const HloModule& module, const HloInstruction& at,
                           std::optional<bool> use_global_device_ids) {
  const std::string* text = at.attribute("replica_groups");
  try {
    const GroupMode mode = collective_group_mode(at.attribute("channel_id") != nullptr,
                                                 use_global_device_ids);
    return global_device_groups(text == nullptr ? DeviceGroups{} : parse_replica_groups(*text),
                                mode, module.replica_count, module.num_partitions);
  } catch (const Error& e) {
    module.fail(at, fmt::format("{} ({}): {}", at.name, at.opcode, e.what()));
  }
}

}  // namespace

const char* const kDevicesAxis = "devices";

ImportedCollective import_collective(const HloModule& module, const HloComputation& computation,
                                     const HloInstruction& instruction, CpuPromotion promotion) {
  ImportedCollective imported;
  imported.hlo_opcode = std::string(collective_opcode(instruction.opcode));
  imported.line = instruction.line;
  const std::string_view op = imported.hlo_opcode;
  const Operands operands = operands_of(module, computation, instruction);

  // One operand: its own shape and type; several: their elements end to end (bytes as uint8 when
  // their types differ).
  const HloShape& first = *operands.arrays[0];
  bool same_type = true;
  for (const HloShape* array : operands.arrays) same_type = same_type && array->element_type == first.element_type;
  const std::optional<DType> dtype = same_type ? timing_dtype(first.element_type) : DType::uint8;
  if (!dtype) {
    module.fail(instruction, fmt::format("{} ({}): element type {}, expected one of 8, 16, 32 or 64 bits",
                                         instruction.name, instruction.opcode, first.element_type));
  }
  imported.dtype = *dtype;
  const bool flat = operands.arrays.size() > 1;
  imported.shape = flat ? Shape{same_type ? operands.elements : operands.bytes} : Shape(first.dims);
  imported.bytes = operands.bytes;
  if (const std::optional<std::string> program_type =
          cpu_promoted_type(module, computation, instruction)) {
    imported.cpu_promoted_from = *program_type;
    if (promotion == CpuPromotion::undo) {  // same elements, each of the program's width
      imported.dtype = *timing_dtype(*program_type);
      imported.bytes = operands.elements * *element_type_bits(*program_type) / 8;
    }
  }

  CollectiveCall& call = imported.call;
  call.axes = AxisNames(kDevicesAxis);
  call.tiled = true;
  const int devices = module.device_count();
  if (op == "collective-permute") {
    call.op = CollectiveOp::ppermute;
    const std::string* pairs = instruction.attribute("source_target_pairs");
    if (pairs == nullptr) {
      module.fail(instruction, fmt::format("{} ({}): expected source_target_pairs", instruction.name, op));
    }
    try {
      imported.source_target_pairs = global_source_target_pairs(
          *pairs, instruction.attribute("channel_id") != nullptr, module.replica_count,
          module.num_partitions);
    } catch (const Error& e) {
      module.fail(instruction, fmt::format("{} ({}): {}", instruction.name, op, e.what()));
    }
    call.perm = imported.source_target_pairs;
    return imported;
  }
  const bool has_global_attribute =
      op == "all-reduce" || op == "all-gather" || op == "reduce-scatter";
  imported.groups = device_groups(
      module, instruction,
      has_global_attribute
          ? std::optional<bool>(boolean_attribute(module, instruction, "use_global_device_ids").value_or(false))
          : std::nullopt);
  if (!is_everyone_in_order(imported.groups, devices)) call.axis_index_groups = imported.groups;
  const std::int64_t group_size = static_cast<std::int64_t>(imported.groups.at(0).size());
  const int dimension = flat ? 0 : dimension_of(module, instruction).value_or(0);
  if (op == "all-reduce") {
    call.op = reduction_op(module, instruction);
  } else if (op == "all-gather") {
    call.op = CollectiveOp::all_gather;
    call.axis = dimension;
    imported.bytes *= group_size;
  } else if (op == "reduce-scatter") {
    call.op = CollectiveOp::psum_scatter;
    call.axis = dimension;
  } else if (op == "all-to-all") {
    call.op = CollectiveOp::all_to_all;
    if (!dimension_of(module, instruction)) imported.shape = Shape{operands.elements};
    call.split_axis = call.concat_axis = flat ? 0 : dimension_of(module, instruction).value_or(0);
  } else {  // collective-broadcast: an all-gather whose gathered result has the root's bytes
    call.op = CollectiveOp::all_gather;
    const std::int64_t elements = same_type ? operands.elements : operands.bytes;
    imported.shape = Shape{std::max<std::int64_t>(1, (elements + group_size - 1) / group_size)};
  }
  return imported;
}

}  // namespace spmd::hlo
