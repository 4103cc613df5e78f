#pragma once
// An HLO module run on the simulated machine (docs/hlo-import.md): every device walks the entry
// computation in the text's order (a scheduled module's run order) without data, and
//  - charges each computing instruction through the machine's roofline (hlo/hlo_cost.h), its
//    FLOPs at compute_efficiency of the peak and its bytes at memory_efficiency of the bandwidth;
//  - times each collective as the jax.lax collective over the module's devices
//    (hlo/hlo_collective.h); a -start / async-start begins it on the device's one communication
//    stream (XLA's async collective stream) and the device computes on until the -done waits;
//  - runs a while body its trip count times (hlo/while_trip_count.h), a call's computation once,
//    and of a conditional the branch with the most FLOPs (then bytes, then the first): the branch
//    index is data the import does not have, and every device must take the same branch;
//  - holds the module's live-range memory peak (hlo/hlo_memory.h) for the step.

#include <cstdint>
#include <vector>

#include "cost_model/roofline.h"
#include "hlo/hlo_collective.h"
#include "hlo/hlo_module.h"
#include "sim/cost_log.h"
#include "sim/machine.h"

namespace spmd::hlo {

// The fractions of the machine's peak FLOP/s and memory bandwidth that HLO ops reach
// (docs/hlo-import.md, "Efficiency"; the defaults' home is cost_model/roofline.h).
inline constexpr double kDefaultComputeEfficiency = cost_model::kDefaultMatmulEfficiency;
inline constexpr double kDefaultMemoryEfficiency = cost_model::kDefaultMemoryEfficiency;

struct HloRunOptions {
  int steps = 1;
  double compute_efficiency = kDefaultComputeEfficiency;
  double memory_efficiency = kDefaultMemoryEfficiency;
  // bf16 collectives XLA:CPU promoted to f32: timed in bf16 (undo) or f32 (keep).
  CpuPromotion cpu_promotion = CpuPromotion::undo;
};

// The collectives one step issues, in the order it issues them (a while body's once per trip).
std::vector<ImportedCollective> step_collectives(const HloModule& module,
                                                 CpuPromotion promotion = CpuPromotion::undo);

// Runs `options.steps` steps (one Machine::run each) and returns their joined cost log.
// spmd::Error naming the file and line for what the import cannot run, and when the machine's
// device count differs from the module's (replica_count × num_partitions).
sim::CostLog run_hlo_module(sim::Machine& machine, const HloModule& module,
                            const HloRunOptions& options = {});

}  // namespace spmd::hlo
