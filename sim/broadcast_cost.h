#pragma once
// The time of a broadcast from mesh device 0 to every device of a machine (a one-axis mesh placed
// by the machine options' placement), without data: JAX has no
// broadcast collective for programs to call, but `spmdsim perf --op broadcast` measures one as
// nccl-tests does. The schedule runs over the machine's links like any collective's.

#include <cstdint>

#include "reference/dtype.h"
#include "sim/cost_log.h"
#include "sim/machine.h"

namespace spmd::sim {

// The record of one broadcast of `elements` of `dtype` (algorithm from the machine's options,
// then its file's "broadcast" choice, then the automatic one).
CollectiveRecord broadcast_cost(Machine& machine, std::int64_t elements, DType dtype);

}  // namespace spmd::sim
