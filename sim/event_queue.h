#pragma once
// The simulator's clock: a heap of events keyed by (virtual time in picoseconds, sequence
// number). Events at the same time run in the order they were scheduled, so a run is the same
// on every machine. Time never goes back.

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace spmd::sim {

class EventQueue {
 public:
  using Action = std::function<void()>;

  std::int64_t now_ps() const { return now_ps_; }
  bool empty() const { return heap_.empty(); }
  std::uint64_t events_run() const { return events_run_; }

  // Schedules `action` at `time_ps` (>= now).
  void schedule(std::int64_t time_ps, Action action);
  // Pops the earliest event, advances the clock to it and runs it.
  void run_next();

 private:
  struct Event {
    std::int64_t time_ps;
    std::uint64_t sequence;
    Action action;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time_ps != b.time_ps ? a.time_ps > b.time_ps : a.sequence > b.sequence;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::int64_t now_ps_ = 0;
  std::uint64_t next_sequence_ = 0;
  std::uint64_t events_run_ = 0;
};

}  // namespace spmd::sim
