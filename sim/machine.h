#pragma once
// The simulator as a backend: pmap / shard_map programs run on a modeled machine's N virtual
// devices, one Boost.Fiber fiber each on the calling thread, under a virtual clock in integer
// picoseconds. Collectives are carried out by their algorithm's schedule over the topology's
// links, so they give the reference's bits (folded in that algorithm's order) and take modeled
// time; the run leaves a cost log (per collective: algorithm, bytes, times, algbw, busbw; per
// device: memory over time and its peak; compute time).
//
// Same inputs, same machine, same options: same results and the same cost log, on any machine.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "reference/backend.h"
#include "reference/float_numerics.h"
#include "sim/cost_log.h"
#include "sim/fiber_stack.h"
#include "sim/group_mirror.h"
#include "sim/library_timing.h"
#include "sim/machine_spec.h"
#include "sim/placement_spec.h"

namespace spmd::sim {

struct SimOptions {
  // Collectives move no data and return zeros of the right type: only time and memory.
  bool cost_only = false;
  // Every collective uses this algorithm where it can (otherwise the automatic choice, noted in
  // the cost log); the machine file's per-op choices apply when unset.
  std::optional<collectives::Algorithm> algorithm;
  // On a machine with a fabric: the library's algorithm and protocol for every collective, as
  // NCCL_ALGO / NCCL_PROTO force them (cost_model/collective_timing.h); unset: the fastest.
  LibraryChoice library;
  // Rings and trees follow each group's rank order instead of the topology's ring (so that the
  // reference, folding with the default ring, gives the same bits; `spmdsim conform` uses it).
  bool ring_by_rank = false;
  // Each device fiber's stack; 0 picks 256 KiB, or 64 KiB above 4096 devices.
  std::size_t fiber_stack_bytes = 0;
  // Keep every link message in the cost log (for traces' flow arrows), up to this many; 0: none.
  // Only messages carried one by one are kept: not those of fast-path groups.
  std::size_t record_link_transfers = 0;
  // The cost log keeps at most this many collective records, compute spans, and memory points
  // per device; past it, it keeps counting (totals, peaks and per-device figures stay exact) and
  // says what it left out. Bounds a run of millions of collectives (docs/simulator.md).
  std::size_t log_record_limit = 100'000;
  // The arithmetic of the modeled platform, in element-wise operations and reductions: plain
  // IEEE by default; `spmdsim conform` gives the numerics of the order it checks against.
  FloatNumerics numerics = kIeeeNumerics;
  // The exact fast path (sim/fast_path.h): a collective that has its links to itself is timed by
  // its algorithm's closed form, the same picoseconds as carrying its messages. false: every
  // collective is carried message by message (`--full-simulation`).
  bool fast_path = true;
  // Which machine device each mesh device runs on (sim/mesh_placement.h): by default the
  // topology's (create_device_mesh's assignment on tori, node-major elsewhere).
  PlacementSpec placement;
  // How transfers share a link (sim/link_sharing.h); unset: the machine's (MachineSpec).
  std::optional<LinkSharing> link_sharing;
  // A run of representatives (sim/group_mirror.h): the mesh run is a reduced one, each of its
  // groups timed and sized as the full mesh's group behind it. Set by workloads/symmetric_step.h.
  std::shared_ptr<const GroupMirror> mirror;
};

class Machine : public Backend {
 public:
  explicit Machine(MachineSpec spec, SimOptions options = {});
  ~Machine() override;

  std::string name() const override { return "sim"; }
  int device_count() const override { return spec_.devices; }
  std::vector<Values> run(const Mesh& mesh, const std::vector<Values>& inputs,
                          const DeviceFunction& function, bool check_vma) override;

  const MachineSpec& spec() const { return spec_; }
  const topology::Topology& topology() const { return *topology_; }
  const SimOptions& options() const { return options_; }
  // The options' link sharing, else the machine's.
  LinkSharing link_sharing() const { return options_.link_sharing.value_or(spec_.link_sharing); }
  void set_options(SimOptions options) { options_ = std::move(options); }
  // The cost log of the last run (also of a run that ended with an error, up to the error).
  const CostLog& cost_log() const { return cost_log_; }
  // Where the next run starts on the timeline fault times count on (sim/faults.h): the sum of
  // the previous runs' ends.
  std::int64_t fault_origin_ps() const { return fault_origin_ps_; }

  // The schedule for `algorithm` on `shape`, built once and then reused: for runs with data, whose
  // schedules are bounded by their data.
  std::shared_ptr<const collectives::Schedule> schedule(collectives::Algorithm algorithm,
                                                        const collectives::CollectiveShape& shape);
  // Its steps one at a time (collectives/step_source.h), made once and then reused: what every
  // run's timing uses, holding O(ranks) where the schedule holds every step's transfers.
  std::shared_ptr<const collectives::StepSource> steps(collectives::Algorithm algorithm,
                                                       const collectives::CollectiveShape& shape);
  // The device fibers' stacks, kept from one run to the next (sim/fiber_stack.h).
  const std::shared_ptr<StackPool>& fiber_stacks() { return fiber_stacks_; }

 private:
  MachineSpec spec_;
  SimOptions options_;
  std::unique_ptr<topology::Topology> topology_;
  CostLog cost_log_;
  std::int64_t fault_origin_ps_ = 0;
  struct ScheduleCache;
  std::unique_ptr<ScheduleCache> schedules_;
  std::shared_ptr<StackPool> fiber_stacks_ = std::make_shared<StackPool>();
};

// Inside a device function on the simulator: the collectives issued while it lives use
// `algorithm` where they can. Elsewhere it does nothing.
class ScopedAlgorithm {
 public:
  ScopedAlgorithm(Context& context, collectives::Algorithm algorithm);
  ~ScopedAlgorithm();
  ScopedAlgorithm(const ScopedAlgorithm&) = delete;
  ScopedAlgorithm& operator=(const ScopedAlgorithm&) = delete;

 private:
  Context& context_;
  std::optional<collectives::Algorithm> previous_;
};

// Inside a device function on a machine with a fabric: the collectives issued while it lives
// use the library's `choice` (algorithm, protocol, or both) where they can, as NCCL_ALGO /
// NCCL_PROTO would for one call. Elsewhere it does nothing.
class ScopedLibraryChoice {
 public:
  ScopedLibraryChoice(Context& context, LibraryChoice choice);
  ~ScopedLibraryChoice();
  ScopedLibraryChoice(const ScopedLibraryChoice&) = delete;
  ScopedLibraryChoice& operator=(const ScopedLibraryChoice&) = delete;

 private:
  Context& context_;
  LibraryChoice previous_;
};

}  // namespace spmd::sim
