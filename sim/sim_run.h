#pragma once
// One simulated run: the device fibers, the clock, the links, the memory ledger and the cost log
// of one Machine::run. Devices run until each finishes or waits in a collective; then the
// earliest event runs (a group starting its schedule, a step ending, a group finishing and
// waking its devices). When no device can run and no event is pending while some still wait,
// the run stops with a deadlock report naming each device and the collective it waits in.

#include <boost/fiber/all.hpp>
#include <cstdint>
#include <exception>
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
#include "sim/link_state.h"
#include "sim/machine.h"
#include "sim/memory_ledger.h"
#include "sim/mesh_placement.h"

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

 protected:
  Array run_collective(const CollectiveCall& call, const Array& x) override;
  void run_collective_cost(const CollectiveCall& call, DType dtype, const Shape& shape) override;

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

  // Called from device fibers (through SimContext).
  Array collective(int device, const CollectiveCall& call, const Array& x,
                   std::optional<collectives::Algorithm> algorithm);
  void collective_cost(int device, const CollectiveCall& call, DType dtype, const Shape& shape,
                       std::optional<collectives::Algorithm> algorithm);
  void charge_compute(int device, double flops, std::int64_t bytes_moved);
  void hold_memory(int device, std::int64_t bytes, const std::string& what);
  void release_memory(int device, std::int64_t bytes);

 private:
  enum class Phase { running, waiting, finished, failed };
  struct Device;
  struct Arrival;
  struct Slot;

  void run_device(int device, const Values& inputs, const DeviceFunction& function, Values& outputs,
                  std::exception_ptr& error, bool& released);
  void engine();
  void run_event();
  Array arrive(int device, Arrival arrival);
  void wait(int device);
  void wake(int device);
  void try_start_group(int index, Slot& slot, int group);
  void start_group(int index, int group);
  void finish_group(int index, int group, std::vector<Array> results, std::exception_ptr error);
  void abort(std::string message);
  std::string device_phrase(int device) const;
  std::string stuck_report() const;
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
  AlgorithmChoice choice_;   // the topology's part computed once per run
  CostLog log_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::map<int, std::unique_ptr<Slot>> slots_;  // by collective index
  int ready_ = 0;
  int done_ = 0;
  std::optional<std::string> abort_message_;
  std::exception_ptr engine_error_;  // thrown by an event: rethrown once every fiber is joined
  boost::fibers::mutex mutex_;       // one thread: held only to satisfy the condition variables
};

}  // namespace spmd::sim
