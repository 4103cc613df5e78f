#pragma once
// An HLO module read from its text: what `jax.jit(f).lower(...).compile().as_text()` prints and
// what `--xla_dump_to` writes after SPMD partitioning (docs/hlo-import.md). The header's
// replica_count and num_partitions; every computation with its instructions in the order the text
// lists them (in a scheduled module, the order they run); per instruction its name, shape,
// opcode, operand names and attributes as written (each attribute decoded where it is used).
// The sections a module prints besides computations (FileNames, StackFrames, ...) are skipped.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hlo/hlo_shape.h"

namespace spmd::hlo {

struct HloInstruction {
  std::string name;    // without the '%'
  HloShape shape;
  std::string opcode;  // "all-reduce", "fusion", ...
  std::vector<std::string> operands;  // names, without '%'
  // Key and value text, in order; a parameter's number is "parameter_number", a constant's
  // literal "literal".
  std::vector<std::pair<std::string, std::string>> attributes;
  int line = 0;        // 1-based line in the file
  bool is_root = false;

  // The value text of `key`, or nullptr.
  const std::string* attribute(std::string_view key) const;
};

struct HloComputation {
  std::string name;
  int line = 0;
  std::vector<HloInstruction> instructions;
  std::map<std::string, int, std::less<>> index_by_name;

  const HloInstruction& root() const;
  // The instruction named `name`, or nullptr.
  const HloInstruction* find(std::string_view name) const;
};

struct HloModule {
  std::string name;
  std::string file;  // for error messages ("program.hlo")
  int replica_count = 1;
  int num_partitions = 1;
  std::vector<HloComputation> computations;
  std::map<std::string, int, std::less<>> index_by_name;
  int entry = -1;

  int device_count() const { return replica_count * num_partitions; }
  const HloComputation& entry_computation() const { return computations.at(static_cast<std::size_t>(entry)); }
  // The computation an attribute of `at` names ("%region_0" or "region_0"); spmd::Error naming
  // the line when there is none.
  const HloComputation& called(std::string_view name, const HloInstruction& at) const;
  // The computation named by attribute `key` of `at`; spmd::Error naming the line when `at` has no
  // such attribute or it names no computation.
  const HloComputation& called_by(std::string_view key, const HloInstruction& at) const;
  // The operand `index` of `at` in `computation`; spmd::Error when it names no instruction there.
  const HloInstruction& operand(const HloComputation& computation, const HloInstruction& at,
                                std::size_t index) const;
  // spmd::Error "file:line: message".
  [[noreturn]] void fail(const HloInstruction& at, std::string_view message) const;
  [[noreturn]] void fail_at_line(int line, std::string_view message) const;
};

// Whether `text` is HLO text: its first word is "HloModule".
bool looks_like_hlo_text(std::string_view text);
// Whether the file at `path` holds HLO text (false when it cannot be read).
bool is_hlo_file(const std::string& path);

// spmd::Error "file:line: ..." naming what was found and what was expected.
HloModule parse_hlo_module(std::string_view text, std::string file);
HloModule load_hlo_file(const std::string& path);

// The names in a list attribute such as "{%a, %b}" (branch_computations, calls).
std::vector<std::string> attribute_names(std::string_view value);
// A conditional's branches: branch_computations, or true_computation and false_computation.
std::vector<std::string> conditional_branches(const HloInstruction& conditional);
// The integers of "{1,0}" / "{}" (dimensions, lhs_contracting_dims); nullopt for other text.
std::optional<std::vector<std::int64_t>> attribute_integers(std::string_view value);

}  // namespace spmd::hlo
