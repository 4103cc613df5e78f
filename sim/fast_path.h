#pragma once
// The exact fast path: a group's collective timed by its algorithm's closed form instead of being
// carried message by message, where the two give the same picoseconds. They do when
//   1. the algorithm's messages go between fixed rank pairs, phase by phase
//      (collectives::link_phases: rings, tori),
//   2. within a phase every pair's route has the same latency and bandwidth,
//   3. no two pairs of a phase share a link, so no message waits for one of its own collective,
//   4. the group's members start together, and nothing else uses those links while it runs.
// This file decides 1-3 (closed_form_time_on_links_ps); the run decides 4 (sim/sim_run.cc), and a
// property test checks both paths give the same bits and cost log (tests/fast_path_test.cc).

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/collective_plan.h"
#include "sim/link_state.h"

namespace spmd::sim {

// The group's time when it has its links to itself, or none where the closed form would not be
// exact. `devices` maps the plan's ranks to device ids.
std::optional<std::int64_t> closed_form_time_on_links_ps(const CollectivePlan& plan,
                                                         const std::vector<int>& devices,
                                                         LinkState& links);

}  // namespace spmd::sim
