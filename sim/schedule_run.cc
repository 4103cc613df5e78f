#include "sim/schedule_run.h"

#include <fmt/format.h>

#include <optional>

#include "reference/error.h"
#include "sim/faults.h"

namespace spmd::sim {
namespace {

// Every rank holds its work buffer and room for the most it receives in one step, while the
// group's collective runs.
class GroupBuffers {
 public:
  void hold(const ScheduleRunSetup& setup, std::int64_t now_ps, MemoryLedger& memory) {
    if (!setup.hold_buffers) return;
    const std::int64_t per_rank = schedule_buffer_bytes(*setup.steps, setup.element_bytes);
    for (int device : setup.devices) {
      memory.allocate(device, per_rank, now_ps, [&setup] { return setup.what() + " buffers"; });
      held_.push_back({device, per_rank});
    }
  }

  void release(std::int64_t now_ps, MemoryLedger& memory) {
    for (auto [device, bytes] : held_) memory.release(device, bytes, now_ps);
    held_.clear();
  }

 private:
  std::vector<std::pair<int, std::int64_t>> held_;
};

class ScheduleRun final : public std::enable_shared_from_this<ScheduleRun>, public StepListener {
 public:
  ScheduleRun(ScheduleRunSetup setup, EventQueue& events, LinkState& links, MemoryLedger& memory,
              ScheduleDone done)
      : setup_(std::move(setup)),
        steps_(*setup_.steps),
        events_(events),
        links_(links),
        memory_(memory),
        done_(std::move(done)) {}

  void start() {
    try {
      hold_buffers();
    } catch (...) {
      release_buffers();
      done_(std::current_exception());
      return;
    }
    run_step(0);
  }

 private:
  void hold_buffers() { buffers_.hold(setup_, events_.now_ps(), memory_); }
  void release_buffers() { buffers_.release(events_.now_ps(), memory_); }

  // Fills transfers_ with the first step at or after raw step `index` that has transfers (an
  // empty raw step is no step of the schedule: running it would add an event); returns its index,
  // or the raw step count when none is left.
  std::size_t next_step(std::size_t index) {
    for (; index < steps_.raw_step_count(); ++index) {
      steps_.raw_step(index, transfers_);
      if (!transfers_.empty()) break;
    }
    return index;
  }

  void run_step(std::size_t first_index) {
    const std::size_t index = next_step(first_index);
    if (index == steps_.raw_step_count()) {
      release_buffers();
      done_(nullptr);
      return;
    }
    step_ = index;
    const StepTransfers step{transfers_, setup_.devices,
                             setup_.element_bytes, setup_.transfer_log != nullptr};
    if (const std::optional<int> failed = links_.failed_link_on(step)) {
      // A failed-link fault (sim/faults.h) with no route around it: the step cannot be carried.
      release_buffers();
      done_(std::make_exception_ptr(Error(fmt::format(
          "{}: its step {} needs {}, which failed, and no route avoids it (failed_link fault)",
          setup_.what(), index, link_name(links_.topology(), *failed)))));
      return;
    }
    // fifo knows the step's end at once; fair calls step_ended when its last flow arrives.
    if (const std::optional<std::int64_t> end = links_.send_step(step, *this)) step_ended(*end);
  }

  void step_ended(std::int64_t end_ps) override {
    events_.schedule(end_ps, [self = shared_from_this(), next = step_ + 1] {
      self->run_step(next);
    });
  }

  std::shared_ptr<StepListener> keep_alive() override { return shared_from_this(); }

  void transfer_arrived(int from, int to, std::int64_t bytes, std::int64_t start_ps,
                        std::int64_t end_ps) override {
    CostLog* log = setup_.transfer_log;
    if (setup_.collective < 0) return;  // a collective past the log's limit
    if (log->transfers.size() >= setup_.transfer_limit) {
      log->transfers_truncated = true;
      return;
    }
    log->transfers.push_back({setup_.collective, from, to, bytes, start_ps, end_ps});
  }

  ScheduleRunSetup setup_;
  const collectives::StepSource& steps_;
  std::vector<collectives::Transfer> transfers_;  // the running step's
  EventQueue& events_;
  LinkState& links_;
  MemoryLedger& memory_;
  ScheduleDone done_;
  GroupBuffers buffers_;
  std::size_t step_ = 0;  // the raw step in flight
};

// The same group timed by the closed form: buffers held from start to end, no messages.
void run_closed_form(const ScheduleRunSetup& setup, std::int64_t duration_ps, EventQueue& events,
                     MemoryLedger& memory, const ScheduleDone& done) {
  auto buffers = std::make_shared<GroupBuffers>();
  try {
    buffers->hold(setup, events.now_ps(), memory);
  } catch (...) {
    buffers->release(events.now_ps(), memory);
    done(std::current_exception());
    return;
  }
  events.schedule(events.now_ps() + duration_ps, [buffers, &events, &memory, done] {
    buffers->release(events.now_ps(), memory);
    done(nullptr);
  });
}

}  // namespace

std::int64_t schedule_buffer_bytes(const collectives::StepSource& steps,
                                   std::int64_t element_bytes) {
  return (steps.work_elements() + steps.max_received_elements_per_step()) * element_bytes;
}

void start_schedule_run(ScheduleRunSetup setup, std::int64_t start_ps, EventQueue& events,
                        LinkState& links, MemoryLedger& memory, ScheduleDone done) {
  auto run = std::make_shared<ScheduleRun>(std::move(setup), events, links, memory,
                                           std::move(done));
  events.schedule(start_ps, [run] { run->start(); });
}

void start_closed_form_run(ScheduleRunSetup setup, std::int64_t start_ps,
                           std::int64_t duration_ps, EventQueue& events, MemoryLedger& memory,
                           ScheduleDone done) {
  events.schedule(start_ps, [setup = std::move(setup), duration_ps, &events, &memory,
                             done = std::move(done)] {
    run_closed_form(setup, duration_ps, events, memory, done);
  });
}

}  // namespace spmd::sim
