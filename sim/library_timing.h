#pragma once
// On a machine with a fabric (MachineSpec::fabric), a collective takes the time its library
// (NCCL, RCCL) would: cost_model/collective_timing.h, for the group's size and nccl-tests' byte
// count. The simulator still moves the data by the planned schedule, so results keep their bits.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "cost_model/collective_timing.h"
#include "reference/collective_call.h"
#include "sim/machine_spec.h"

namespace spmd::sim {

using cost_model::LibraryChoice;

// The first of `choices` that forces an algorithm, and the first that forces a protocol: a
// call's choice, then its run's, then its machine's.
LibraryChoice first_forced(std::initializer_list<LibraryChoice> choices);

// The group's size and how many of its ranks lie on one node.
struct GroupSpread {
  int ranks = 1;
  int ranks_per_node = 0;  // 0: consecutive devices (cost_model::TimingRequest::ranks_per_node)
};

// The most ranks of a group on any one node of the machine's fabric, from the machine devices
// the group runs on; 0 without a fabric.
int group_ranks_per_node(const MachineSpec& machine, const std::vector<int>& devices);

// None when the machine has no fabric, `op` moves nothing (axis_index) or the group is one
// device. `bytes` is the nccl-tests size: all_gather's gathered output, every other op's
// per-device input, of elements of `element_bytes`.
std::optional<cost_model::TimedChoice> library_timing(const MachineSpec& machine, CollectiveOp op,
                                                      std::int64_t bytes, int element_bytes,
                                                      GroupSpread group,
                                                      const LibraryChoice& forced = {});

// The note a collective's record carries for the library's choice: the fallback, if any, and,
// for a sum the switches or the network reduce (NVLS, NVLS-tree, CollNet), that the hardware
// fixes its order: the results keep the planned schedule's order, not the hardware's.
std::string library_note(const cost_model::TimedChoice& choice, CollectiveOp op);

}  // namespace spmd::sim
