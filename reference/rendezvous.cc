#include "reference/rendezvous.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "reference/collective_semantics.h"
#include "reference/device_report.h"

namespace spmd {

Rendezvous::Rendezvous(const Mesh& mesh, const ReductionOrder& order)
    : Rendezvous(mesh,
                 [&mesh, &order](const CollectiveCall& call, const std::vector<Array>& inputs) {
                   return evaluate_collective(call, mesh, inputs, order);
                 }) {}

Rendezvous::Rendezvous(const Mesh& mesh, CollectiveEvaluator evaluate)
    : evaluate_(std::move(evaluate)),
      next_index_(static_cast<std::size_t>(mesh.device_count()), 0),
      states_(static_cast<std::size_t>(mesh.device_count()), State::running),
      waiting_in_(static_cast<std::size_t>(mesh.device_count()), -1) {}

Array Rendezvous::exchange(int device, const CollectiveCall& call, const Array& input) {
  const auto d = static_cast<std::size_t>(device);
  const std::size_t n = states_.size();
  std::unique_lock lock(mutex_);
  const int index = next_index_[d]++;
  Slot& slot = slots_[index];
  if (slot.calls.empty()) {
    slot.calls.resize(n);
    slot.input_types.resize(n);
    slot.inputs.resize(n);
  }
  slot.calls[d] = call;
  slot.input_types[d] = input.type_string();
  slot.inputs[d] = input;
  states_[d] = State::waiting;
  waiting_in_[d] = index;
  if (++slot.arrived == static_cast<int>(n)) on_all_arrived(index, slot);
  abort_if_stuck();
  changed_.wait(lock, [&] { return slot.done || abort_message_.has_value(); });
  if (!slot.done) throw DeadlockError(*abort_message_);
  states_[d] = State::running;
  waiting_in_[d] = -1;
  Array result = std::move(slot.results[d]);
  if (++slot.picked_up == static_cast<int>(n)) slots_.erase(index);
  return result;
}

void Rendezvous::on_all_arrived(int index, Slot& slot) {
  for (std::size_t d = 1; d < slot.calls.size(); ++d) {
    const bool same_type = slot.inputs[d].dtype() == slot.inputs[0].dtype() &&
                           slot.inputs[d].shape() == slot.inputs[0].shape();
    if (*slot.calls[d] != *slot.calls[0] || !same_type) {
      abort_message_ =
          fmt::format("deadlock: devices disagree at collective #{}: {}", index, stuck_report());
      changed_.notify_all();
      return;
    }
  }
  // An error here fails the last device to arrive; the others are then released (abort_if_stuck).
  slot.results = evaluate_(*slot.calls[0], slot.inputs);
  slot.inputs.clear();  // drop the inputs now; results are all that waiting devices need
  slot.done = true;
  changed_.notify_all();
}

void Rendezvous::device_finished(int device) {
  std::lock_guard lock(mutex_);
  states_[static_cast<std::size_t>(device)] = State::finished;
  abort_if_stuck();
}

void Rendezvous::device_failed(int device) {
  std::lock_guard lock(mutex_);
  states_[static_cast<std::size_t>(device)] = State::failed;
  abort_if_stuck();
}

void Rendezvous::abort_if_stuck() {
  if (abort_message_) return;
  // A device waiting in a completed collective is about to run again: not stuck.
  bool any_waiting = false;
  for (std::size_t d = 0; d < states_.size(); ++d) {
    if (states_[d] == State::running) return;
    if (states_[d] == State::waiting) {
      if (slots_.at(waiting_in_[d]).done) return;
      any_waiting = true;
    }
  }
  if (!any_waiting) return;
  abort_message_ = "deadlock: no device can proceed: " + stuck_report();
  changed_.notify_all();
}

std::string Rendezvous::device_report(int device) const {
  const auto d = static_cast<std::size_t>(device);
  switch (states_[d]) {
    case State::running: return "runs";
    case State::finished: return fmt::format("finished after {} collective(s)", next_index_[d]);
    case State::failed: return "failed with an error";
    case State::waiting: {
      const Slot& slot = slots_.at(waiting_in_[d]);
      return fmt::format("waits in {} of {} (collective #{})", slot.calls[d]->to_string(),
                         slot.input_types[d], waiting_in_[d]);
    }
  }
  return "";
}

std::string Rendezvous::stuck_report() const {
  std::vector<std::string> phrases;
  for (int d = 0; d < static_cast<int>(states_.size()); ++d) phrases.push_back(device_report(d));
  return grouped_device_report(phrases);
}

}  // namespace spmd
