#pragma once
// The symmetric step (docs/simulator.md, "The symmetric step"): a `transformer` step whose cost
// does not grow with the device count. Every device of one pipeline stage runs the same program
// (its tensor, context, FSDP and data-parallel ranks change nothing it does), so where every
// collective's time depends only on its group's size and how many of its ranks share a node (a
// machine with a fabric, sim/library_timing.h) and those are the same for every group of a mesh
// axis, the devices of a stage run alike: one device per stage is simulated
// (sim/group_mirror.h), each of its collectives timed as its full group, and the rest arrive as
// it does. Step time, communication, memory and every collective record are the full run's, to
// the picosecond (tests/symmetric_step_test.cc). Where symmetry breaks (faults or stragglers, no
// fabric, groups of an axis spread differently over the nodes) the full run runs, and the
// result says why.

#include <optional>
#include <string>
#include <vector>

#include "sim/cost_log.h"
#include "sim/machine.h"
#include "workloads/workload.h"

namespace spmd {

struct WorkloadRun {
  sim::CostLog log;
  // Run by representatives: the full mesh device each of the log's devices stands for (its
  // per-device figures are theirs, and those of every device of their stage); empty: every
  // device ran.
  std::vector<int> representatives;
  // For a transformer: how the step ran, one line without '\n' ("symmetric step: ..." or "full
  // run: ..." and why); empty for other workloads.
  std::string note;
};

// Why the transformer step of `spec` cannot run by representatives on `machine`, or nothing.
std::optional<std::string> symmetric_step_refusal(const TransformerSpec& spec,
                                                  const sim::Machine& machine);

// run_workload, by representatives where a transformer step allows it and `allow_symmetric`.
WorkloadRun run_workload_symmetric(sim::Machine& machine, const Workload& workload,
                                   bool allow_symmetric = true);

// The full mesh device's representative's index among `run.representatives` (its pipeline
// stage), for a run by representatives of `spec`.
int representative_index(const TransformerSpec& spec, int full_device);

}  // namespace spmd
