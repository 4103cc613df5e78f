#pragma once
// `--placement`: where a command's mesh lies on the machine's devices (sim/placement_spec.h),
// for run, scale, perf and demo.

#include <string>

#include "cli/cli11_fwd.h"
#include "sim/placement_spec.h"

namespace spmd {

void add_placement_flag(CLI::App& command, std::string& placement);
// The spec; spmd::Error naming --placement for text it cannot read.
sim::PlacementSpec placement_from_flag(const std::string& placement);

}  // namespace spmd
