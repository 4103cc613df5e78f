#pragma once
// The memory an HLO module holds per device, from its buffers' live ranges: each instruction's
// result is a buffer from the instruction that defines it to its last use (in a scheduled module
// the text's order is the run order), the entry's parameters live throughout and its result to
// the end; the peak is the most bytes live at once, counting at a while, call or conditional the
// peak of its computations' own buffers (a while runs in place on its operand's buffers; a fusion
// materialises only its result). Buffers that alias others take no bytes: get-tuple-element,
// bitcast, opt-barrier, a -done's result (its -start's), a parameter of a called computation
// (its caller's). A tuple is its pointer table (8 bytes per element, as XLA counts it); constants
// are not counted (XLA keeps them with the code). docs/hlo-import.md compares this with
// compiled.memory_analysis().

#include <cstdint>

#include "hlo/hlo_module.h"

namespace spmd::hlo {

struct MemoryEstimate {
  std::int64_t argument_bytes = 0;  // the entry's parameters
  std::int64_t output_bytes = 0;    // the entry's result (with its tuple table)
  std::int64_t peak_bytes = 0;      // the most live at once, arguments and output included
};

MemoryEstimate module_memory(const HloModule& module);

}  // namespace spmd::hlo
