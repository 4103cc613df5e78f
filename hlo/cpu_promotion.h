#pragma once
// XLA:CPU's float normalization promotes a bf16 (or f16) program's collectives to f32: the
// reduction computation is cloned with f32 parameters (its name ends "_promoted", e.g.
// %region_0.0_promoted or %add.clone_promoted), the operand reaches the collective as f32 (a
// convert, often inside a fusion) and the result is converted back to bf16 after it. A GPU
// compile of the same program moves bf16: half the bytes. The importer times such a collective
// in the program's type unless asked to keep the CPU compile's (docs/hlo-import.md, "bf16
// programs compiled for CPU").

#include <optional>
#include <string>
#include <vector>

#include "hlo/hlo_collective.h"
#include "hlo/hlo_module.h"

namespace spmd::hlo {

// The element type ("bf16", "f16") `collective` (an all-reduce, reduce-scatter or all-gather of
// f32 in `computation`) had in the program before XLA:CPU promoted it, or nullopt when it shows
// no promotion: an all-reduce or reduce-scatter needs a "_promoted" reduction and its result
// converted back to that type; an all-gather, which has no reduction, an operand converted from
// that type and its result converted back to it. Converts are followed through fusions,
// get-tuple-element, copies, bitcasts and further promoted collectives.
std::optional<std::string> cpu_promoted_type(const HloModule& module,
                                             const HloComputation& computation,
                                             const HloInstruction& collective);

// The line a run prints about the promoted collectives among `collectives` (one step's) and what
// `promotion` did with them; empty when there are none.
std::string cpu_promotion_note(const std::vector<ImportedCollective>& collectives,
                               CpuPromotion promotion);

}  // namespace spmd::hlo
