#pragma once
// An HLO collective as the call the simulator times: the devices of a module are the devices of
// one mesh axis, "devices" (global device id = replica × num_partitions + partition), and an HLO
// collective becomes the jax.lax collective over that axis with the same data movement:
//   all-reduce          psum (pmax / pmin when its to_apply is maximum / minimum)
//   all-gather          all_gather(axis=dimensions[0], tiled=True)
//   reduce-scatter      psum_scatter(scatter_dimension=dimensions[0], tiled=True)
//   all-to-all          all_to_all(split_axis=concat_axis=dimensions[0], tiled=True)
//   collective-permute  ppermute(perm=source_target_pairs)
//   collective-broadcast  timed as all_gather of the same bytes (docs/hlo-import.md): spmdsim has
//                       no broadcast a program calls; every member receives the root's bytes
// with axis_index_groups = the replica groups in global ids (none when one group holds every
// device in order). Several operands (a combined collective) are one call on their elements
// laid end to end, as XLA issues one library call for them.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hlo/hlo_module.h"
#include "hlo/replica_groups.h"
#include "reference/collective_call.h"
#include "reference/dtype.h"

namespace spmd::hlo {

extern const char* const kDevicesAxis;  // "devices"

struct ImportedCollective {
  std::string hlo_opcode;  // "all-reduce", also for all-reduce-start
  int line = 0;
  CollectiveCall call;
  DType dtype = DType::float32;
  Shape shape;             // the input per device, as the call takes it
  // nccl-tests' S: the operands' bytes (all-gather: times the group size, the gathered result).
  std::int64_t bytes = 0;
  DeviceGroups groups;                              // global ids; permutes: none
  std::vector<std::pair<int, int>> source_target_pairs;  // collective-permute
  // The program's element type ("bf16") of a collective XLA:CPU promoted to f32
  // (hlo/cpu_promotion.h); empty when it was not. `dtype` and `bytes` are the program's type's
  // unless the import kept the promotion.
  std::string cpu_promoted_from;
};

// What the import does with a bf16 collective XLA:CPU promoted to f32: time it in the program's
// type (bf16, as a GPU compile moves it) or as the CPU compile wrote it (f32).
enum class CpuPromotion { undo, keep };

// `instruction` (a collective or its -start) of `computation`. spmd::Error naming the line for
// attributes the importer cannot read.
ImportedCollective import_collective(const HloModule& module, const HloComputation& computation,
                                     const HloInstruction& instruction,
                                     CpuPromotion promotion = CpuPromotion::undo);

}  // namespace spmd::hlo
