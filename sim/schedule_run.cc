#include "sim/schedule_run.h"

#include <optional>

namespace spmd::sim {
namespace {

class ScheduleRun : public std::enable_shared_from_this<ScheduleRun>, public StepListener {
 public:
  ScheduleRun(ScheduleRunSetup setup, EventQueue& events, LinkState& links, MemoryLedger& memory,
              ScheduleDone done)
      : setup_(std::move(setup)),
        schedule_(*setup_.schedule),
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
  // Every rank holds its work buffer and room for the most it receives in one step.
  void hold_buffers() {
    const std::int64_t per_rank =
        (schedule_.work_elements + schedule_.max_received_elements_per_step()) *
        setup_.element_bytes;
    for (int device : setup_.devices) {
      memory_.allocate(device, per_rank, events_.now_ps(), setup_.what + " buffers");
      held_.push_back({device, per_rank});
    }
  }

  void release_buffers() {
    for (auto [device, bytes] : held_) memory_.release(device, bytes, events_.now_ps());
    held_.clear();
  }

  void run_step(std::size_t index) {
    if (index == schedule_.steps.size()) {
      release_buffers();
      done_(nullptr);
      return;
    }
    step_ = index;
    const StepTransfers step{schedule_.steps[index].transfers, setup_.devices,
                             setup_.element_bytes, setup_.transfer_log != nullptr};
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
    if (log->transfers.size() >= setup_.transfer_limit) {
      log->transfers_truncated = true;
      return;
    }
    log->transfers.push_back({setup_.collective, from, to, bytes, start_ps, end_ps});
  }

  ScheduleRunSetup setup_;
  const collectives::Schedule& schedule_;
  EventQueue& events_;
  LinkState& links_;
  MemoryLedger& memory_;
  ScheduleDone done_;
  std::vector<std::pair<int, std::int64_t>> held_;
  std::size_t step_ = 0;  // the step in flight
};

}  // namespace

void start_schedule_run(ScheduleRunSetup setup, std::int64_t start_ps, EventQueue& events,
                        LinkState& links, MemoryLedger& memory, ScheduleDone done) {
  auto run = std::make_shared<ScheduleRun>(std::move(setup), events, links, memory,
                                           std::move(done));
  events.schedule(start_ps, [run] { run->start(); });
}

}  // namespace spmd::sim
