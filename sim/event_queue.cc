#include "sim/event_queue.h"

#include <fmt/format.h>

#include "reference/check.h"

namespace spmd::sim {

void EventQueue::schedule(std::int64_t time_ps, Action action) {
  SPMD_CHECK(time_ps >= now_ps_,
             fmt::format("EventQueue: event at {} ps is before now ({} ps): virtual time cannot "
                         "go back",
                         time_ps, now_ps_));
  heap_.push(Event{time_ps, next_sequence_++, std::move(action)});
}

void EventQueue::run_next() {
  SPMD_CHECK(!heap_.empty(), "EventQueue: run_next on an empty queue");
  Event event = heap_.top();
  heap_.pop();
  now_ps_ = event.time_ps;
  ++events_run_;
  event.action();
}

}  // namespace spmd::sim
