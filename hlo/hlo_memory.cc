#include "hlo/hlo_memory.h"

#include <algorithm>
#include <set>
#include <vector>

#include "hlo/hlo_cost.h"

namespace spmd::hlo {
namespace {

std::int64_t buffer_bytes(const HloShape& shape) { return shape.bytes() + tuple_table_bytes(shape); }

bool aliases_operand(std::string_view opcode) {
  return opcode == "get-tuple-element" || opcode == "bitcast" || opcode == "opt-barrier" ||
         opcode == "add-dependency" || opcode == "domain" || opcode == "while" ||
         opcode.ends_with("-done") || opcode == "async-update";
}

class LiveRanges {
 public:
  LiveRanges(const HloModule& module, const HloComputation& computation, bool is_entry)
      : module_(module), computation_(computation), is_entry_(is_entry) {}

  // The most bytes live at once in the computation (its parameters only when it is the entry).
  std::int64_t peak() {
    const std::size_t n = computation_.instructions.size();
    owners_.assign(n, {});
    nested_peak_.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) define(i);
    for (int buffer : owners_of(computation_.root())) buffers_[static_cast<std::size_t>(buffer)].last_use = n;
    // Bytes live at each instruction: a difference array over [defined, last_use].
    std::vector<std::int64_t> change(n + 2, 0);
    for (const Buffer& buffer : buffers_) {
      change[buffer.defined] += buffer.bytes;
      change[std::max(buffer.defined, buffer.last_use) + 1] -= buffer.bytes;
    }
    std::int64_t live = 0, most = 0;
    for (std::size_t i = 0; i <= n; ++i) {
      live += change[i];
      most = std::max(most, live + (i < n ? nested_peak_[i] : 0));
    }
    return most;
  }

 private:
  struct Buffer {
    std::int64_t bytes = 0;
    std::size_t defined = 0;
    std::size_t last_use = 0;
  };

  const std::vector<int>& owners_of(const HloInstruction& instruction) const {
    return owners_[static_cast<std::size_t>(computation_.index_by_name.at(instruction.name))];
  }

  void add_buffer(std::size_t at, std::int64_t bytes) {
    if (bytes <= 0) return;
    owners_[at].push_back(static_cast<int>(buffers_.size()));
    buffers_.push_back({bytes, at, at});
  }

  void define(std::size_t at) {
    const HloInstruction& instruction = computation_.instructions[at];
    const std::string_view opcode = instruction.opcode;
    std::vector<const HloInstruction*> operands;
    for (std::size_t k = 0; k < instruction.operands.size(); ++k) {
      operands.push_back(&module_.operand(computation_, instruction, k));
    }
    for (const HloInstruction* operand : operands) {
      for (int buffer : owners_of(*operand)) buffers_[static_cast<std::size_t>(buffer)].last_use = at;
    }
    if (opcode == "parameter") {
      if (is_entry_) {
        add_buffer(at, buffer_bytes(instruction.shape));
        buffers_.back().last_use = computation_.instructions.size();
      }
    } else if (opcode == "constant") {
      // XLA keeps constants with the generated code, outside the module's buffers.
    } else if (aliases_operand(opcode)) {
      if (!operands.empty()) owners_[at] = owners_of(*operands[0]);
    } else if (opcode == "tuple") {
      add_buffer(at, tuple_table_bytes(instruction.shape));
      for (const HloInstruction* operand : operands) {
        for (int buffer : owners_of(*operand)) owners_[at].push_back(buffer);
      }
    } else if (opcode.ends_with("-start")) {
      // The start's tuple holds its operands (aliased) and its results (new).
      std::int64_t bytes = instruction.shape.bytes();
      if (instruction.shape.is_tuple) {
        for (const HloInstruction* operand : operands) bytes -= operand->shape.bytes();
      }
      add_buffer(at, std::max<std::int64_t>(bytes, 0));
    } else {
      add_buffer(at, buffer_bytes(instruction.shape));
    }
    nested_peak_[at] = nested_peak(instruction);
  }

  std::int64_t nested_peak(const HloInstruction& instruction) const {
    const auto peak_of = [&](const HloComputation& called) {
      return LiveRanges(module_, called, false).peak();
    };
    if (instruction.opcode == "while") {
      return std::max(peak_of(module_.called_by("body", instruction)),
                      peak_of(module_.called_by("condition", instruction)));
    }
    if (instruction.opcode == "call") return peak_of(module_.called_by("to_apply", instruction));
    if (instruction.opcode == "conditional") {
      std::int64_t most = 0;
      for (const std::string& branch : conditional_branches(instruction)) {
        most = std::max(most, peak_of(module_.called(branch, instruction)));
      }
      return most;
    }
    return 0;
  }

  const HloModule& module_;
  const HloComputation& computation_;
  bool is_entry_;
  std::vector<Buffer> buffers_;
  std::vector<std::vector<int>> owners_;
  std::vector<std::int64_t> nested_peak_;
};

}  // namespace

MemoryEstimate module_memory(const HloModule& module) {
  const HloComputation& entry = module.entry_computation();
  MemoryEstimate estimate;
  for (const HloInstruction& instruction : entry.instructions) {
    if (instruction.opcode == "parameter") estimate.argument_bytes += instruction.shape.bytes();
  }
  estimate.output_bytes = buffer_bytes(entry.root().shape);
  estimate.peak_bytes = LiveRanges(module, entry, true).peak();
  return estimate;
}

}  // namespace spmd::hlo
