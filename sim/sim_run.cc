#include "sim/sim_run.h"

#include <fmt/format.h>

#include <algorithm>

#include "cost_model/roofline.h"
#include "reference/check.h"
#include "reference/collective_groups.h"
#include "reference/collective_semantics.h"
#include "reference/device_report.h"
#include "sim/collective_layout.h"
#include "sim/schedule_run.h"

namespace spmd::sim {

using collectives::Algorithm;

struct SimRun::Device {
  Phase phase = Phase::running;
  std::int64_t clock_ps = 0;
  int next_index = 0;
  int waiting_in = -1;
  std::string waiting_what;  // "psum('i') of float32[3]"
  boost::fibers::condition_variable wake;
  bool woken = false;
  bool delivered = false;
  Array result;
  std::exception_ptr error;  // the group's error (out of memory), rethrown on wake
};

struct SimRun::Arrival {
  CollectiveCall call;
  DType dtype = DType::float32;
  Shape shape;
  Array input;  // unused without data
  bool with_data = true;
  std::optional<Algorithm> algorithm;
  std::int64_t time_ps = 0;
};

struct SimRun::Slot {
  std::map<int, Arrival> arrivals;       // by device
  std::vector<std::vector<int>> groups;  // device ids in rank order, from the first call
  std::vector<int> group_of;             // by device; -1: in no group
  std::vector<int> arrived_in_group;
  int axis_size = 1;
  int groups_done = 0;
  std::size_t record = 0;  // index into the cost log
  bool record_started = false;
};

// ---- SimContext

void SimContext::charge_compute(double flops, std::int64_t bytes_moved) {
  run_.charge_compute(device(), flops, bytes_moved);
}
void SimContext::hold_memory(std::int64_t bytes, const std::string& what) {
  run_.hold_memory(device(), bytes, what);
}
void SimContext::release_memory(std::int64_t bytes) { run_.release_memory(device(), bytes); }
Array SimContext::run_collective(const CollectiveCall& call, const Array& x) {
  return run_.collective(device(), call, x, algorithm_override);
}
void SimContext::run_collective_cost(const CollectiveCall& call, DType dtype, const Shape& shape) {
  run_.collective_cost(device(), call, dtype, shape, algorithm_override);
}

// ---- SimRun

SimRun::SimRun(Machine& machine, const Mesh& mesh, bool check_vma)
    : machine_(machine),
      mesh_(mesh),
      check_vma_(check_vma),
      device_count_(mesh.device_count()),
      links_(machine.topology(), events_, machine.link_sharing()),
      memory_(machine.topology().device_count(), machine.spec().memory_bytes),
      choice_(base_choice(machine)) {
  for (int d = 0; d < device_count_; ++d) devices_.push_back(std::make_unique<Device>());
}

SimRun::~SimRun() = default;

std::vector<Values> SimRun::run(const std::vector<Values>& inputs, const DeviceFunction& function) {
  const auto n = static_cast<std::size_t>(device_count_);
  std::vector<Values> outputs(n);
  std::vector<std::exception_ptr> errors(n);
  std::vector<char> released(n, 0);
  std::size_t stack_bytes = machine_.options().fiber_stack_bytes;
  if (stack_bytes == 0) stack_bytes = device_count_ > 4096 ? 64 * 1024 : 256 * 1024;
  std::vector<boost::fibers::fiber> fibers;
  fibers.reserve(n);
  ready_ = device_count_;
  for (int d = 0; d < device_count_; ++d) {
    const auto i = static_cast<std::size_t>(d);
    fibers.emplace_back(std::allocator_arg, boost::fibers::fixedsize_stack(stack_bytes), [&, d, i] {
      bool was_released = false;
      run_device(d, inputs[i], function, outputs[i], errors[i], was_released);
      released[i] = was_released;
    });
  }
  engine();
  for (auto& fiber : fibers) fiber.join();
  if (engine_error_) std::rethrow_exception(engine_error_);
  // The lowest-numbered device that failed on its own; a deadlock report only if none did.
  for (std::size_t d = 0; d < n; ++d) {
    if (errors[d] && !released[d]) std::rethrow_exception(errors[d]);
  }
  for (const auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return outputs;
}

void SimRun::run_device(int device, const Values& inputs, const DeviceFunction& function,
                        Values& outputs, std::exception_ptr& error, bool& released) {
  Device& self = *devices_[static_cast<std::size_t>(device)];
  SimContext context(mesh_, device, check_vma_, machine_.options().numerics, *this);
  const DeviceScope scope;
  try {
    std::int64_t input_bytes = 0;
    for (const Array& x : inputs) input_bytes += static_cast<std::int64_t>(x.size_bytes());
    memory_.allocate(device, input_bytes, self.clock_ps, "the program's inputs");
    outputs = function(context, inputs);
    self.phase = Phase::finished;
  } catch (const DeadlockError&) {
    error = std::current_exception();
    released = true;
    self.phase = Phase::failed;
  } catch (...) {
    error = std::current_exception();
    self.phase = Phase::failed;
  }
  --ready_;
  ++done_;
}

void SimRun::engine() {
  for (;;) {
    while (ready_ > 0) boost::this_fiber::yield();
    if (done_ == device_count_) return;
    if (abort_message_) {
      for (int d = 0; d < device_count_; ++d) {
        if (devices_[static_cast<std::size_t>(d)]->phase == Phase::waiting) wake(d);
      }
      continue;
    }
    if (!events_.empty()) {
      run_event();
      continue;
    }
    abort_message_ = "deadlock: no device can proceed: " + stuck_report();
  }
}

// Events run here, outside every fiber, so an error one throws (a broken invariant) cannot reach
// a device's handler; left to unwind, it would destroy fibers that are still joinable, which
// terminates. Instead the run stops: waiting devices are released with a DeadlockError, and
// run() rethrows this error once every fiber is joined.
void SimRun::run_event() {
  try {
    events_.run_next();
  } catch (...) {
    engine_error_ = std::current_exception();
    abort("stopped by an error in the simulator");
  }
}

// ---- Collectives

Array SimRun::collective(int device, const CollectiveCall& call, const Array& x,
                         std::optional<Algorithm> algorithm) {
  const bool with_data = !machine_.options().cost_only;
  Arrival arrival{call, x.dtype(), x.shape(), with_data ? x : Array(), with_data, algorithm, 0};
  Array result = arrive(device, std::move(arrival));
  if (!with_data) {
    const int n = collective_axis_size(mesh_, call);
    return zero_result(call, x, n);
  }
  return result;
}

void SimRun::collective_cost(int device, const CollectiveCall& call, DType dtype,
                             const Shape& shape, std::optional<Algorithm> algorithm) {
  arrive(device, Arrival{call, dtype, shape, Array(), false, algorithm, 0});
}

Array SimRun::arrive(int device, Arrival arrival) {
  Device& self = *devices_[static_cast<std::size_t>(device)];
  if (abort_message_) throw DeadlockError(*abort_message_);
  const int index = self.next_index++;
  arrival.time_ps = self.clock_ps;
  std::unique_ptr<Slot>& slot_pointer = slots_[index];
  if (!slot_pointer) {
    slot_pointer = std::make_unique<Slot>();
    Slot& slot = *slot_pointer;
    slot.groups = collective_groups(mesh_, arrival.call);
    slot.axis_size = collective_axis_size(mesh_, arrival.call);
    slot.group_of.assign(static_cast<std::size_t>(device_count_), -1);
    for (std::size_t g = 0; g < slot.groups.size(); ++g) {
      for (int member : slot.groups[g]) {
        slot.group_of[static_cast<std::size_t>(member)] = static_cast<int>(g);
      }
    }
    slot.arrived_in_group.assign(slot.groups.size(), 0);
  }
  Slot& slot = *slot_pointer;
  self.phase = Phase::waiting;
  self.waiting_in = index;
  self.waiting_what = arrival.call.to_string() + " of " + std::string(dtype_name(arrival.dtype)) +
                      shape_string(arrival.shape);
  const Arrival& first = slot.arrivals.empty() ? arrival : slot.arrivals.begin()->second;
  const bool agrees = first.call == arrival.call && first.dtype == arrival.dtype &&
                      first.shape == arrival.shape && first.with_data == arrival.with_data;
  const int group = slot.group_of[static_cast<std::size_t>(device)];
  slot.arrivals.emplace(device, std::move(arrival));
  if (!agrees) {
    abort(fmt::format("deadlock: devices disagree at collective #{}: {}", index, stuck_report()));
  } else if (group >= 0 &&
             ++slot.arrived_in_group[static_cast<std::size_t>(group)] ==
                 static_cast<int>(slot.groups[static_cast<std::size_t>(group)].size())) {
    try_start_group(index, slot, group);
  }
  wait(device);
  if (!self.delivered) throw DeadlockError(*abort_message_);
  self.delivered = false;
  if (self.error) std::rethrow_exception(std::exchange(self.error, nullptr));
  return std::exchange(self.result, Array());
}

void SimRun::try_start_group(int index, Slot& slot, int group) {
  std::int64_t start_ps = events_.now_ps();
  for (int member : slot.groups[static_cast<std::size_t>(group)]) {
    start_ps = std::max(start_ps, slot.arrivals.at(member).time_ps);
  }
  events_.schedule(start_ps, [this, index, group] { start_group(index, group); });
}

AlgorithmChoice SimRun::base_choice(const Machine& machine) {
  const topology::Topology& topology = machine.topology();
  AlgorithmChoice choice;
  choice.topology_traits = topology.traits();
  choice.ring_order = topology.ring_order();
  choice.ring_by_rank = machine.options().ring_by_rank;
  choice.torus_dims = topology.dims();
  choice.pipeline_chunk_bytes = machine.spec().pipeline_chunk_bytes;
  choice.forced = machine.options().algorithm;
  return choice;
}

const AlgorithmChoice& SimRun::algorithm_choice(collectives::CollectiveKind kind,
                                                std::optional<Algorithm> forced) {
  choice_.forced = forced ? forced : machine_.options().algorithm;
  const auto& by_kind = machine_.spec().algorithms;
  auto it = by_kind.find(std::string(collectives::collective_kind_name(kind)));
  choice_.for_kind = it != by_kind.end() ? std::optional<Algorithm>(it->second) : std::nullopt;
  return choice_;
}

void SimRun::start_group(int index, int group) {
  Slot& slot = *slots_.at(index);
  const std::vector<int>& members = slot.groups[static_cast<std::size_t>(group)];
  const Arrival& first = slot.arrivals.at(members.front());
  const int n = static_cast<int>(members.size());
  const AlgorithmChoice& choice = algorithm_choice(collective_kind(first.call.op), first.algorithm);
  const CollectivePlan plan =
      plan_collective(first.call, first.dtype, first.shape, members, slot.axis_size, choice);
  std::shared_ptr<const collectives::Schedule> schedule =
      machine_.schedule(plan.algorithm, plan.shape);

  if (!slot.record_started) {
    slot.record_started = true;
    slot.record = log_.collectives.size();
    CollectiveRecord record;
    record.index = index;
    record.op = std::string(collective_op_name(first.call.op));
    record.call = first.call.to_string();
    record.axes = first.call.axes.to_string();
    record.dtype = std::string(dtype_name(first.dtype));
    record.shape = shape_string(first.shape);
    const std::int64_t input_bytes =
        plan.shape.elements * static_cast<std::int64_t>(dtype_size_bytes(first.dtype));
    record.bytes = first.call.op == CollectiveOp::all_gather ? input_bytes * n : input_bytes;
    record.algorithm = std::string(collectives::algorithm_name(plan.algorithm));
    record.algorithm_note = plan.algorithm_note;
    record.groups = static_cast<int>(slot.groups.size());
    record.group_size = n;
    record.with_data = first.with_data;
    record.start_ps = events_.now_ps();
    record.end_ps = events_.now_ps();
    log_.collectives.push_back(record);
  }

  auto results = std::make_shared<std::vector<Array>>();
  if (first.with_data) {
    std::vector<Array> inputs;
    for (int member : members) inputs.push_back(slot.arrivals.at(member).input);
    *results = group_results(first.call, plan, *schedule, inputs, machine_.options().numerics);
  }
  ScheduleRunSetup setup{schedule,
                         members,
                         plan.shape.element_bytes,
                         first.call.to_string(),
                         static_cast<int>(slot.record),
                         nullptr,
                         0};
  if (machine_.options().record_link_transfers > 0) {
    setup.transfer_log = &log_;
    setup.transfer_limit = machine_.options().record_link_transfers;
  }
  start_schedule_run(std::move(setup), events_.now_ps(), events_, links_, memory_,
                     [this, index, group, results](std::exception_ptr error) {
                       finish_group(index, group, std::move(*results), error);
                     });
}

void SimRun::finish_group(int index, int group, std::vector<Array> results,
                          std::exception_ptr error) {
  Slot& slot = *slots_.at(index);
  const std::vector<int>& members = slot.groups[static_cast<std::size_t>(group)];
  for (std::size_t r = 0; r < members.size(); ++r) {
    Device& member = *devices_[static_cast<std::size_t>(members[r])];
    SPMD_CHECK(events_.now_ps() >= member.clock_ps,
               fmt::format("device {} clock at {} ps would go back to {} ps when collective #{} "
                           "ends",
                           members[r], member.clock_ps, events_.now_ps(), index));
    member.clock_ps = events_.now_ps();
    member.delivered = true;
    member.error = error;
    if (!error && r < results.size()) member.result = std::move(results[r]);
    wake(members[r]);
  }
  CollectiveRecord& record = log_.collectives[slot.record];
  record.end_ps = std::max(record.end_ps, events_.now_ps());
  set_bandwidths(record);
  if (++slot.groups_done == static_cast<int>(slot.groups.size())) slots_.erase(index);
}

void SimRun::wait(int device) {
  Device& self = *devices_[static_cast<std::size_t>(device)];
  --ready_;
  std::unique_lock lock(mutex_);
  self.wake.wait(lock, [&] { return self.woken; });
  self.woken = false;
}

void SimRun::wake(int device) {
  Device& self = *devices_[static_cast<std::size_t>(device)];
  self.phase = Phase::running;
  self.waiting_in = -1;
  self.woken = true;
  ++ready_;
  self.wake.notify_one();
}

void SimRun::abort(std::string message) {
  if (!abort_message_) abort_message_ = std::move(message);
}

// ---- Local work and memory

void SimRun::charge_compute(int device, double flops, std::int64_t bytes_moved) {
  if (!(flops >= 0) || bytes_moved < 0) {
    // {:f}: the digits std::to_string gave this message before.
    throw Error(fmt::format("charge_compute: flops {:f} and bytes {}, expected both >= 0", flops,
                            bytes_moved));
  }
  Device& self = *devices_[static_cast<std::size_t>(device)];
  const MachineSpec& spec = machine_.spec();
  const std::int64_t time_ps = cost_model::compute_time_ps(
      flops, bytes_moved, spec.peak_flops_per_s, spec.memory_bandwidth_bytes_per_s);
  log_.compute_spans.push_back(
      {device, self.clock_ps, self.clock_ps + time_ps, flops, bytes_moved});
  self.clock_ps += time_ps;
}

void SimRun::hold_memory(int device, std::int64_t bytes, const std::string& what) {
  if (bytes < 0) {
    throw Error(fmt::format("hold_memory: {} bytes for {} on device {}, expected >= 0", bytes, what,
                            device));
  }
  memory_.allocate(device, bytes, devices_[static_cast<std::size_t>(device)]->clock_ps, what);
}

void SimRun::release_memory(int device, std::int64_t bytes) {
  const std::int64_t in_use = memory_.in_use_bytes(device);
  if (bytes < 0 || bytes > in_use) {
    throw Error(
        fmt::format("release_memory: {} bytes on device {}, expected at most the {} bytes in use",
                    bytes, device, in_use));
  }
  memory_.release(device, bytes, devices_[static_cast<std::size_t>(device)]->clock_ps);
}

// ---- Reports

std::string SimRun::device_phrase(int device) const {
  const Device& self = *devices_[static_cast<std::size_t>(device)];
  switch (self.phase) {
    case Phase::running: return "runs";
    case Phase::finished: return fmt::format("finished after {} collective(s)", self.next_index);
    case Phase::failed: return "failed with an error";
    case Phase::waiting:
      return fmt::format("waits in {} (collective #{})", self.waiting_what, self.waiting_in);
  }
  return "";
}

std::string SimRun::stuck_report() const {
  std::vector<std::string> phrases;
  for (int d = 0; d < device_count_; ++d) phrases.push_back(device_phrase(d));
  return grouped_device_report(phrases);
}

CostLog SimRun::take_cost_log() {
  log_.end_ps = 0;
  log_.compute_ps.assign(static_cast<std::size_t>(device_count_), 0);
  for (const ComputeSpan& span : log_.compute_spans) {
    log_.compute_ps[static_cast<std::size_t>(span.device)] += span.end_ps - span.start_ps;
  }
  for (int d = 0; d < device_count_; ++d) {
    const std::int64_t clock = devices_[static_cast<std::size_t>(d)]->clock_ps;
    log_.device_end_ps.push_back(clock);
    log_.end_ps = std::max(log_.end_ps, clock);
    log_.memory.push_back({memory_.peak_bytes(d), memory_.timeline(d)});
  }
  log_.link_transfers = links_.transfers();
  return std::move(log_);
}

}  // namespace spmd::sim
