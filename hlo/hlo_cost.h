#pragma once
// What each HLO instruction is to the simulator, and the local work of those that compute
// (docs/hlo-import.md, "Op costs"):
//  - dot: 2 × result elements × the product of the lhs contracting dimensions FLOPs;
//  - convolution: 2 × result elements × (kernel elements / output features) FLOPs;
//  - fusion: the FLOPs of the dots and convolutions of its fused computation (nested fusions and
//    calls included); its bytes are its operands' and its result's, not the fused intermediates';
//  - a cuBLAS GEMM custom-call: as a dot, from its backend_config's dot_dimension_numbers;
//  - every other computing op: no FLOPs;
//  - bytes moved: the operands' and the result's bytes; slices read and write the result
//    (slice, dynamic-slice: 2 × result), a dynamic-update-slice works in place (2 × the update).
// An opcode outside XLA's list is an spmd::Error naming the line.

#include <cstdint>

#include "hlo/hlo_module.h"

namespace spmd::hlo {

enum class OpKind {
  no_work,           // parameter, constant, tuple, get-tuple-element, bitcast, partition-id, ...
  compute,           // charged through the roofline
  collective,        // all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute, ...
  collective_start,  // all-reduce-start, all-gather-start, collective-permute-start
  collective_done,   // their -done
  async_start,       // async-start (wrapping a collective, or other work)
  async_update,
  async_done,
  while_loop,
  call,
  conditional,
};

// spmd::Error "file:line: NAME: opcode 'x', expected ..." for an opcode the importer does not
// know, and for those it knows it cannot run (send, recv, infeed, outfeed, ragged-all-to-all).
OpKind op_kind(const HloModule& module, const HloInstruction& instruction);

// The opcode of a collective without its "-start" ("all-reduce-start" -> "all-reduce").
std::string_view collective_opcode(std::string_view opcode);

struct ComputeCost {
  double flops = 0;
  std::int64_t bytes = 0;
};

// The work of a compute instruction of `computation`.
ComputeCost compute_cost(const HloModule& module, const HloComputation& computation,
                         const HloInstruction& instruction);

// The FLOPs of the dots and convolutions of a computation (a fusion's), nested ones included.
double computation_flops(const HloModule& module, const HloComputation& computation);

}  // namespace spmd::hlo
