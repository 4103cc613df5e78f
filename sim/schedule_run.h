#pragma once
// One group's collective carried out over the links, in virtual time: the schedule's steps run
// one after another; each step's transfers leave when the step starts, share the links of their
// routes (sim/link_state.h: fair sharing or fifo queues) and the step ends at its last arrival.
// The steps come from the algorithm's step source one at a time (collectives/step_source.h), so a
// run holds one step, never the whole schedule. The group's work and receive buffers are held in
// the memory ledger for the whole run. The data itself is computed by
// collectives::run_schedule_data from the materialized schedule; only time and memory are
// modeled here.

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectives/step_source.h"
#include "sim/cost_log.h"
#include "sim/event_queue.h"
#include "sim/link_state.h"
#include "sim/link_step.h"
#include "sim/memory_ledger.h"

namespace spmd::sim {

struct ScheduleRunSetup {
  std::shared_ptr<const collectives::StepSource> steps;
  std::vector<int> devices;  // group rank -> device id
  std::int64_t element_bytes = 4;
  // "psum('i') (collective #3)", for errors only: built when one needs it (a simulation starts
  // groups by the hundred thousand).
  std::function<std::string()> what;
  int collective = 0;        // the cost log record's index, for recorded transfers; -1: none
  // Where to record each message when traces want them (null: not recorded), and how many.
  CostLog* transfer_log = nullptr;
  std::size_t transfer_limit = 0;
  // false: the caller holds the buffers (SimRun: on each device from its start call to its
  // wait, see schedule_buffer_bytes).
  bool hold_buffers = true;
};

// What one rank holds while the schedule runs: its work buffer and room for the most it
// receives in one step.
std::int64_t schedule_buffer_bytes(const collectives::StepSource& steps,
                                   std::int64_t element_bytes);

// Called at the virtual time the last step ends, or with the error that stopped the run (an
// out-of-memory error when the buffers do not fit).
using ScheduleDone = std::function<void(std::exception_ptr error)>;

// Schedules the run's first step at `start_ps` (>= events.now_ps()).
void start_schedule_run(ScheduleRunSetup setup, std::int64_t start_ps, EventQueue& events,
                        LinkState& links, MemoryLedger& memory, ScheduleDone done);

// The exact fast path (sim/fast_path.h): the same buffers held, the same events at the same times,
// but no messages: the run ends `duration_ps` (the closed form) after it starts.
void start_closed_form_run(ScheduleRunSetup setup, std::int64_t start_ps,
                           std::int64_t duration_ps, EventQueue& events, MemoryLedger& memory,
                           ScheduleDone done);

}  // namespace spmd::sim
