#pragma once
// The reference backend's meeting point: every device hands its input for its k-th collective
// here; when all have arrived, the last one computes every device's result in one place
// (evaluate_collective, or another backend's evaluator) and wakes the others. When no device can
// move any more (each has finished, failed or waits), the waiting ones are released with a report
// of who waits in what: a program whose devices disagree about collectives is reported, never a
// hang.

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "reference/array.h"
#include "reference/collective_call.h"
#include "reference/mesh.h"
#include "reference/reduction_order.h"

namespace spmd {

// Every device's result (index = device id) of one collective, from every device's input.
using CollectiveEvaluator =
    std::function<std::vector<Array>(const CollectiveCall& call, const std::vector<Array>& inputs)>;

class Rendezvous {
 public:
  // The reference's results: evaluate_collective folding float sums in `order`.
  Rendezvous(const Mesh& mesh, const ReductionOrder& order);
  // Results from `evaluate`, e.g. a GPU running the collective (backends/cuda).
  Rendezvous(const Mesh& mesh, CollectiveEvaluator evaluate);

  // Blocks until every device has called its collective with the same index; returns this
  // device's result. Throws DeadlockError when the devices disagree or can never all arrive.
  Array exchange(int device, const CollectiveCall& call, const Array& input);
  void device_finished(int device);
  void device_failed(int device);

 private:
  enum class State { running, waiting, finished, failed };
  struct Slot {
    std::vector<std::optional<CollectiveCall>> calls;
    std::vector<std::string> input_types;  // "float32[4]", kept for reports
    std::vector<Array> inputs;
    int arrived = 0;
    int picked_up = 0;
    bool done = false;
    std::vector<Array> results;
  };

  void on_all_arrived(int index, Slot& slot);
  void abort_if_stuck();
  std::string device_report(int device) const;  // "waits in psum('i') of float32[3]"
  std::string stuck_report() const;

  CollectiveEvaluator evaluate_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<int, Slot> slots_;  // by collective index
  std::vector<int> next_index_;
  std::vector<State> states_;
  std::vector<int> waiting_in_;
  std::optional<std::string> abort_message_;
};

}  // namespace spmd
