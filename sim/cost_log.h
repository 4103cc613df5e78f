#pragma once
// What a simulated run cost: one record per collective call (op, axes, dtype, bytes, algorithm,
// issue, start and end in virtual time, algbw and busbw as nccl-tests defines them) and, per
// device, the memory in use over time and its peak, its compute, the communication it waited
// for (exposed) and the communication its compute hid (overlapped), in total and per step.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/memory_ledger.h"

namespace spmd::sim {

struct CollectiveRecord {
  int index = 0;             // the program's k-th collective
  std::string op;            // "psum", "all_gather", ...
  std::string call;          // "psum('i')", the whole call
  std::string axes;          // "'i'" or "('x', 'y')"
  std::string dtype;
  std::string shape;         // the input's shape, "[1024,1024]"
  // nccl-tests' S: the input per rank for all-reduce, reduce-scatter, all-to-all and
  // permutes; the gathered output for all-gather.
  std::int64_t bytes = 0;
  std::string algorithm;       // "ring", "direct", ...
  std::string algorithm_note;  // why a requested algorithm was not used
  int groups = 1;
  int group_size = 1;
  bool with_data = true;       // false: cost only
  std::int64_t issue_ps = 0;   // the earliest member's start call (<= start_ps)
  std::int64_t start_ps = 0;
  std::int64_t end_ps = 0;
  double algbw_bytes_per_s = 0;  // S / t
  double busbw_bytes_per_s = 0;  // algbw * the op's factor (2(n-1)/n for all-reduce, ...)
};

// Local work charged to a device (Context::charge_compute).
struct ComputeSpan {
  int device = 0;
  std::int64_t start_ps = 0;
  std::int64_t end_ps = 0;
  double flops = 0;
  std::int64_t bytes = 0;
};

// One message over the links (recorded with SimOptions::record_link_transfers), for traces.
struct LinkTransferRecord {
  int collective = 0;  // index into CostLog::collectives
  int from_device = 0;
  int to_device = 0;
  std::int64_t bytes = 0;
  std::int64_t start_ps = 0;
  std::int64_t end_ps = 0;
};

// One Machine::run of a workload (a training step), on the joined timeline.
struct StepRecord {
  std::int64_t start_ps = 0;
  std::int64_t end_ps = 0;  // when its last device finished
  // Per device, within the step: its end, its exposed and its overlapped communication (as in
  // CostLog).
  std::vector<std::int64_t> device_end_ps;
  std::vector<std::int64_t> exposed_communication_ps;
  std::vector<std::int64_t> overlapped_communication_ps;
};

// A fault (sim/faults.h) taking effect during the run, at its time on the run's timeline.
struct FaultEvent {
  std::string kind;         // "straggler", "degraded", "failed_link", "failed_device"
  std::string description;  // "straggler: device 3 computes 2x slower from 1 ms"
  int device = -1;          // straggler, failed_device: the machine device
  int link_from = -1;       // degraded, failed_link: the directed link's nodes
  int link_to = -1;
  std::int64_t at_ps = 0;
};

struct DeviceMemory {
  std::int64_t peak_bytes = 0;
  std::vector<MemoryPoint> timeline;
  bool timeline_truncated = false;  // it reached SimOptions::log_record_limit points
};

struct CostLog {
  // The first SimOptions::log_record_limit collectives, in the order they started.
  std::vector<CollectiveRecord> collectives;
  // Every collective, also those past the limit: how many started, and their summed end - start.
  std::uint64_t collective_count = 0;
  std::int64_t collective_time_ps = 0;
  std::vector<DeviceMemory> memory;       // per device
  std::vector<std::int64_t> compute_ps;   // per device: time charged to local compute
  std::vector<ComputeSpan> compute_spans; // in the order they were charged, up to the limit
  bool compute_spans_truncated = false;   // more were charged than recorded
  std::vector<std::int64_t> device_end_ps;  // per device: its clock when it finished
  // Per device: time blocked in waits for collectives, the sum over its waits of (clock after
  // the wait - clock at the wait call): communication its compute did not cover, and time
  // waiting for late group members.
  std::vector<std::int64_t> exposed_communication_ps;
  // Per device: time with at least one of its collectives running (its group's start to end).
  std::vector<std::int64_t> communication_in_flight_ps;
  // Per device: of that time, the part it spent computing (communication hidden by compute).
  std::vector<std::int64_t> overlapped_communication_ps;
  std::vector<StepRecord> steps;           // one per Machine::run (append_run adds them)
  std::int64_t end_ps = 0;                // when the last device finished
  std::uint64_t link_transfers = 0;       // messages carried over links
  // Groups timed by the closed form (sim/fast_path.h), whose messages were not carried one by one.
  std::uint64_t closed_form_groups = 0;
  // With SimOptions::record_link_transfers: every message, in the order sent, up to the limit.
  std::vector<LinkTransferRecord> transfers;
  bool transfers_truncated = false;        // more were sent than recorded
  // The faults that took effect in the run (those whose time lies within it), by time.
  std::vector<FaultEvent> faults;
  // Where the mesh lay on the machine (MeshPlacement::text): "data=y,model=x", "row-major", ...
  std::string placement;
};

// Appends a later run's log to `total`, its times shifted to start where `total` ends: a
// training loop of several Machine::run calls as one timeline. Collective and transfer indices
// are renumbered to follow on.
void append_run(CostLog& total, const CostLog& next);

// nccl-tests' bus bandwidth factor for an op over n ranks (doc/PERFORMANCE.md).
double bus_bandwidth_factor(const std::string& op, int n);
// Fills algbw and busbw from bytes, start and end (zero for a collective that took no time).
void set_bandwidths(CollectiveRecord& record);

}  // namespace spmd::sim
