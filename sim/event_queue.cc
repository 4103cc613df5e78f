#include "sim/event_queue.h"

#include <cassert>

#include "reference/error.h"

namespace spmd::sim {

void EventQueue::schedule(std::int64_t time_ps, Action action) {
  if (time_ps < now_ps_) {
    throw Error("EventQueue: event at " + std::to_string(time_ps) + " ps is before now (" +
                std::to_string(now_ps_) + " ps): virtual time cannot go back");
  }
  heap_.push(Event{time_ps, next_sequence_++, std::move(action)});
}

void EventQueue::run_next() {
  assert(!heap_.empty());
  Event event = heap_.top();
  heap_.pop();
  now_ps_ = event.time_ps;
  ++events_run_;
  event.action();
}

}  // namespace spmd::sim
