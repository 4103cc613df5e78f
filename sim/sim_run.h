#pragma once
// One simulated run: the device fibers, the clock, the links, the memory ledger and the cost log
// of one Machine::run. Devices run until each finishes or waits for a collective; then the
// earliest event runs (a group starting its schedule, a step ending, a group finishing and
// waking its devices). A device starts a collective and goes on (its clock does not move);
// several may be in flight on a device, matched across devices by their issue index; waiting
// blocks it until its group has finished. When no device can run and no event is pending while
// some still wait, the run stops with a deadlock report naming each device, the collective it
// waits in and the ones it started and has not waited.

#include <boost/fiber/all.hpp>
#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "reference/backend.h"
#include "sim/collective_plan.h"
#include "sim/cost_log.h"
#include "sim/event_queue.h"
#include "sim/faults.h"
#include "sim/fiber_stack.h"
#include "sim/link_state.h"
#include "sim/library_timing.h"
#include "sim/machine.h"
#include "sim/memory_ledger.h"
#include "sim/mesh_placement.h"
#include "sim/overlap_account.h"

namespace spmd::sim {

class SimRun;

// What a device function sees on the simulator.
class SimContext : public Context {
 public:
  SimContext(const Mesh& mesh, int device, bool check_vma, const FloatNumerics& numerics,
             SimRun& run)
      : Context(mesh, device, check_vma, numerics), run_(run) {}

  void charge_compute(double flops, std::int64_t bytes_moved) override;
  void hold_memory(std::int64_t bytes, const std::string& what) override;
  void release_memory(std::int64_t bytes) override;

  std::optional<collectives::Algorithm> algorithm_override;  // ScopedAlgorithm
  LibraryChoice library_override;                            // ScopedLibraryChoice

 protected:
  Array run_collective(const CollectiveCall& call, const Array& x) override;
  void run_collective_cost(const CollectiveCall& call, DType dtype, const Shape& shape) override;
  Started start_collective(const CollectiveCall& call, const Array& x,
                           const StartOptions& options) override;
  Started start_collective_cost(const CollectiveCall& call, DType dtype, const Shape& shape,
                                const StartOptions& options) override;
  Array wait_collective(std::int64_t id) override;

 private:
  SimRun& run_;
};

class SimRun {
 public:
  SimRun(Machine& machine, const Mesh& mesh, bool check_vma);
  ~SimRun();

  // Runs every device's function to the end; returns outputs by device, or rethrows the error of
  // the lowest-numbered device that failed on its own (a deadlock report if none did).
  std::vector<Values> run(const std::vector<Values>& inputs, const DeviceFunction& function);
  CostLog take_cost_log();

  // Called from device fibers (through SimContext). A start returns the collective's index
  // (the device's issue count), which the wait takes, and the collective's shared record of its
  // call (for the handle, which names it in errors).
  struct StartedIndex {
    int index = -1;
    std::shared_ptr<const StartedCall> call;
  };
  StartedIndex start_collective(int device, const CollectiveCall& call, const Array& x,
                                std::optional<collectives::Algorithm> algorithm,
                                const LibraryChoice& library, int stream);
  StartedIndex start_collective_cost(int device, const CollectiveCall& call, DType dtype,
                                     const Shape& shape,
                                     std::optional<collectives::Algorithm> algorithm,
                                     const LibraryChoice& library, int stream);
  Array wait_collective(int device, int index);
  void charge_compute(int device, double flops, std::int64_t bytes_moved);
  void hold_memory(int device, std::int64_t bytes, const std::string& what);
  void release_memory(int device, std::int64_t bytes);

  // What a device is doing with collectives, for start_group (e.g. to choose a closed form only
  // when no member has other traffic in flight).
  struct DeviceCollectives {
    std::vector<int> in_flight;  // collectives it started whose group has not finished, ascending
    int blocked_on = -1;         // the collective it waits for now; -1: not waiting
    bool finished = false;       // its function has returned or failed
  };
  DeviceCollectives device_collectives(int device) const;

 private:
  enum class Phase { running, waiting, finished, failed };
  struct Device;
  struct Arrival;
  struct Slot;
  struct InFlight;

  void run_device(int device, const Values& inputs, const DeviceFunction& function, Values& outputs,
                  std::exception_ptr& error, bool& released);
  void engine();
  void run_event();
  // The call as a device starts it (copied only into the collective's slot, by its first device).
  struct StartedCallView {
    const CollectiveCall& call;
    DType dtype;
    const Shape& shape;
    std::shared_ptr<const StartedCall> copy() const {
      return std::make_shared<const StartedCall>(StartedCall{call, dtype, shape});
    }
  };
  StartedIndex start(int device, const StartedCallView& called, bool with_data, Arrival arrival);
  Slot& slot_for(int index, const CollectiveCall& call);
  // The group on the machine and the call's axis size: the full mesh's in a run of
  // representatives (SimOptions::mirror).
  PlacedGroup placed_group(const Slot& slot, int group) const;
  int group_axis_size(const Slot& slot, int group) const;
  void hold_buffers(int device, Slot& slot, int group,
                    std::optional<collectives::Algorithm> algorithm, InFlight& flight);
  void follow_stream(Device& self, Slot& slot, int group, int index, int stream);
  void block(int device);
  void wake(int device);
  void group_ready(int index, Slot& slot, int group);
  void start_group(int index, int group);
  void finish_group(int index, int group, std::vector<Array> results, std::exception_ptr error);
  bool runs_alone(int index, const std::vector<int>& members) const;
  static bool starts_after(const Device& device, int index, int later);
  std::optional<std::int64_t> fast_path_time_ps(int index, const CollectivePlan& plan,
                                                const std::vector<int>& members,
                                                const std::vector<int>& devices);
  void finish_member(int index, int group, int device, Array* result, std::exception_ptr error);
  void stream_predecessor_done(int device, int index);
  void settle_overlap(Device& self);
  void schedule_faults();
  std::exception_ptr device_failure(int index, int group) const;
  void log_faults();
  void abort(std::string message);
  std::optional<std::string> left_behind_report() const;
  std::string device_phrase(int device) const;
  std::string stuck_report() const;
  void log_device_figures();
  static AlgorithmChoice base_choice(const Machine& machine);
  const AlgorithmChoice& algorithm_choice(collectives::CollectiveKind kind,
                                          std::optional<collectives::Algorithm> forced);

  Machine& machine_;
  const Mesh& mesh_;
  bool check_vma_;
  int device_count_;
  EventQueue events_;
  LinkState links_;
  MemoryLedger memory_;      // by machine device
  MeshPlacement placement_;  // mesh device -> machine device
  FaultPlan faults_;
  AlgorithmChoice choice_;   // the topology's part computed once per run
  CostLog log_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::map<int, std::unique_ptr<Slot>> slots_;  // by collective index
  int ready_ = 0;
  int done_ = 0;
  int running_device_ = -1;  // the device whose fiber runs now (fibers switch only when blocking)
  bool fibers_not_started_ = false;  // making the device fibers failed: they return at once
  std::vector<StackBounds> stacks_;  // each device fiber's (sim/fiber_stack.h)
  // The fewest collectives a device that finished its function started (a larger index can
  // never complete).
  int finished_after_ = std::numeric_limits<int>::max();
  std::optional<std::string> abort_message_;
  std::exception_ptr engine_error_;  // thrown by an event: rethrown once every fiber is joined
  boost::fibers::mutex mutex_;       // one thread: held only to satisfy the condition variables
};

}  // namespace spmd::sim
