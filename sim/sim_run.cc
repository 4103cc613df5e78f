#include "sim/sim_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

#include "cost_model/roofline.h"
#include "reference/check.h"
#include "reference/collective_groups.h"
#include "reference/collective_semantics.h"
#include "reference/device_report.h"
#include "sim/collective_layout.h"
#include "sim/fast_path.h"
#include "sim/fiber_stack_size.h"
#include "sim/library_timing.h"
#include "sim/schedule_run.h"
#include "support/checked_math.h"
#include "support/units.h"

namespace spmd::sim {

namespace {

constexpr StackBounds kThreadStack{};  // note_running_on: the thread's own stack

// Joins the run's fibers. The thread's scheduler frees a finished fiber, and so gives its stack
// back to the machine's pool, on its next pass, which would otherwise come during the next run,
// after that run made its own stacks: one pass now.
void join_and_free(std::vector<boost::fibers::fiber>& fibers) {
  for (auto& fiber : fibers) fiber.join();
  boost::this_fiber::yield();
  note_running_on(kThreadStack);
}

}  // namespace

using collectives::Algorithm;

// One collective a device started, from its start call until its wait returns.
struct SimRun::InFlight {
  // Named in errors only, so formatted only then: what() "psum('i') of float32[3]", call_text()
  // "psum('i')". Shared with the collective's slot (every device that agrees with it).
  std::shared_ptr<const StartedCall> started;
  std::string what() const { return started->text(); }
  std::string call_text() const { return started->call.to_string(); }
  int stream = -1;
  int stream_next = -1;  // the next collective the device started on the same stream
  std::int64_t buffer_bytes = 0;
  std::int64_t called_ps = 0;  // the device's clock at its start call
  bool done = false;  // its group has finished
  std::int64_t end_ps = 0;
  Array result;
  std::exception_ptr error;  // the group's error, rethrown by the wait
};

struct SimRun::Device {
  // The last collective a device started on one stream, and whether it has finished.
  struct StreamTail {
    int last = -1;
    bool done = true;
    std::int64_t end_ps = 0;
  };
  Phase phase = Phase::running;
  std::int64_t clock_ps = 0;
  int next_index = 0;
  int waiting_in = -1;
  std::map<int, InFlight> in_flight;  // started and not waited, by collective index
  std::map<int, StreamTail> streams;
  std::int64_t exposed_ps = 0;       // time blocked in waits
  OverlapAccount overlap;            // its groups' [start, end) and its compute spans
  boost::fibers::condition_variable wake;
  bool woken = false;
};

// One device's start of a collective; the call, element type and shape are the slot's (every
// device's must agree with them).
struct SimRun::Arrival {
  Array input;  // unused without data
  std::optional<Algorithm> algorithm;
  LibraryChoice library;  // forced for this call (ScopedLibraryChoice), else the run's
  int stream = -1;
  std::int64_t time_ps = 0;
};

struct SimRun::Slot {
  // The call, element type and shape of the first device to start it, and whether it moves data.
  std::shared_ptr<const StartedCall> started;
  bool with_data = true;
  std::map<int, Arrival> arrivals;       // by device
  std::vector<std::vector<int>> groups;  // device ids in rank order, from the first call
  std::vector<int> group_of;             // by device; -1: in no group
  std::vector<int> arrived_in_group;
  // Per group: members whose previous collective on the same stream has not finished, the
  // latest end of those that have, the per-rank buffer bytes (-1: not computed yet), and when
  // it started.
  std::vector<int> stream_blocked;
  std::vector<std::int64_t> stream_ready_ps;
  std::vector<std::int64_t> buffer_bytes;
  std::vector<std::int64_t> start_ps;
  std::int64_t earliest_arrival_ps = std::numeric_limits<std::int64_t>::max();
  int axis_size = 1;
  int groups_done = 0;
  // The collective's record: in the cost log at `logged_at` while the log has room, else here
  // (counted in the log's totals only).
  CollectiveRecord record;
  std::optional<std::size_t> logged_at;
  bool record_started = false;
  // On a machine with a fabric, the library's time for groups of `library_group_size` ranks
  // lying `library_ranks_per_node` to a node: the groups of one collective have the same size
  // and bytes, and usually the same spread, so it is computed again only when that changes.
  std::optional<cost_model::TimedChoice> library;
  int library_group_size = 0;  // 0: not computed yet
  int library_ranks_per_node = 0;
  // In a run of representatives (SimOptions::mirror): per group, the full mesh's group behind it.
  std::vector<MirroredGroup> mirrored;
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
  return wait_collective(start_collective(call, x, {}).id);
}
void SimContext::run_collective_cost(const CollectiveCall& call, DType dtype, const Shape& shape) {
  wait_collective(start_collective_cost(call, dtype, shape, {}).id);
}
Context::Started SimContext::start_collective(const CollectiveCall& call, const Array& x,
                                              const StartOptions& options) {
  SimRun::StartedIndex started = run_.start_collective(device(), call, x, algorithm_override,
                                                       library_override, options.stream);
  return {std::nullopt, started.index, std::move(started.call)};
}
Context::Started SimContext::start_collective_cost(const CollectiveCall& call, DType dtype,
                                                   const Shape& shape,
                                                   const StartOptions& options) {
  SimRun::StartedIndex started = run_.start_collective_cost(
      device(), call, dtype, shape, algorithm_override, library_override, options.stream);
  return {std::nullopt, started.index, std::move(started.call)};
}
Array SimContext::wait_collective(std::int64_t id) {
  return run_.wait_collective(device(), static_cast<int>(id));
}

// ---- SimRun

SimRun::SimRun(Machine& machine, const Mesh& mesh, bool check_vma)
    : machine_(machine),
      mesh_(mesh),
      check_vma_(check_vma),
      device_count_(mesh.device_count()),
      links_(machine.topology(), events_, machine.link_sharing()),
      memory_(machine.topology().device_count(), machine.spec().memory_bytes,
              machine.options().log_record_limit),
      placement_(machine.options().placement, mesh, machine.topology()),
      faults_(machine.spec().faults, machine.topology(), machine.fault_origin_ps()),
      choice_(base_choice(machine)) {
  for (int d = 0; d < device_count_; ++d) devices_.push_back(std::make_unique<Device>());
  schedule_faults();
}

// Link faults change the links at their times (before any other event at the same time, being
// scheduled first); a fault from before this run applies from its start. Device faults are
// looked up where they matter (charge_compute, start_group, finish_group).
void SimRun::schedule_faults() {
  const topology::Topology& topology = machine_.topology();
  for (const FaultPlan::Timed& timed : faults_.faults()) {
    const std::int64_t at_ps = std::max<std::int64_t>(0, timed.at_ps);
    for (int link : timed.links) {
      if (timed.fault.kind == FaultKind::degraded) {
        const std::int64_t bandwidth = degraded_bandwidth(
            topology.links()[static_cast<std::size_t>(link)].spec.bandwidth_bytes_per_s,
            timed.fault.factor);
        events_.schedule(at_ps, [this, link, bandwidth] { links_.set_link_bandwidth(link, bandwidth); });
      } else if (timed.fault.kind == FaultKind::failed_link) {
        events_.schedule(at_ps, [this, link] { links_.fail_link(link); });
      }
    }
  }
}

SimRun::~SimRun() = default;

std::vector<Values> SimRun::run(const std::vector<Values>& inputs, const DeviceFunction& function) {
  const auto n = static_cast<std::size_t>(device_count_);
  std::vector<Values> outputs(n);
  std::vector<std::exception_ptr> errors(n);
  std::vector<char> released(n, 0);
  const std::size_t stack_bytes =
      fiber_stack_bytes(machine_.options().fiber_stack_bytes, device_count_);
  std::vector<boost::fibers::fiber> fibers;
  fibers.reserve(n);
  stacks_.assign(n, {});
  ready_ = device_count_;
  try {
    for (int d = 0; d < device_count_; ++d) {
      const auto i = static_cast<std::size_t>(d);
      fibers.emplace_back(std::allocator_arg,
                          RecordedStack(machine_.fiber_stacks(), stack_bytes, &stacks_[i]),
                          [&, d, i] {
                            note_running_on(stacks_[i]);
                            if (fibers_not_started_)
                              return;  // the host could not make them all: see below
                            bool was_released = false;
                            run_device(d, inputs[i], function, outputs[i], errors[i], was_released);
                            released[i] = was_released;
                          });
    }
  } catch (const std::exception& e) {
    // The fibers made so far have not run yet; they must end before they are destroyed.
    fibers_not_started_ = true;
    join_and_free(fibers);
    throw Error(fmt::format(
        "the host could not make {} device fibers with {} stacks ({} in all; it stopped at "
        "device {}: {}); expected fewer devices or a smaller SimOptions::fiber_stack_bytes",
        n, format_bytes(static_cast<std::int64_t>(stack_bytes)),
        format_bytes(static_cast<std::int64_t>(stack_bytes * n)), fibers.size(), e.what()));
  }
  engine();
  join_and_free(fibers);
  if (engine_error_) std::rethrow_exception(engine_error_);
  const bool any_error = std::any_of(errors.begin(), errors.end(), [](auto& e) { return e != nullptr; });
  if (!any_error) {
    if (std::optional<std::string> report = left_behind_report()) throw DeadlockError(*report);
  }
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
  running_device_ = device;
  try {
    std::int64_t input_bytes = 0;
    for (const Array& x : inputs) input_bytes += static_cast<std::int64_t>(x.size_bytes());
    memory_.allocate(placement_.device(device), input_bytes, self.clock_ps, "the program's inputs");
    outputs = function(context, inputs);
    context.check_all_waited();
    self.phase = Phase::finished;
    finished_after_ = std::min(finished_after_, self.next_index);
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
    while (ready_ > 0) {
      boost::this_fiber::yield();
      note_running_on(kThreadStack);
    }
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

SimRun::StartedIndex SimRun::start_collective(int device, const CollectiveCall& call,
                                              const Array& x, std::optional<Algorithm> algorithm,
                                              const LibraryChoice& library, int stream) {
  const bool with_data = !machine_.options().cost_only;
  StartedIndex started = start(device, {call, x.dtype(), x.shape()}, with_data,
                               Arrival{with_data ? x : Array(), algorithm, library, stream, 0});
  if (!with_data) {
    // Cost only: the result is zeros of the right type, ready for the wait.
    InFlight& flight = devices_[static_cast<std::size_t>(device)]->in_flight.at(started.index);
    flight.result = zero_result(call, x, collective_axis_size(mesh_, call));
  }
  return started;
}

SimRun::StartedIndex SimRun::start_collective_cost(int device, const CollectiveCall& call,
                                                   DType dtype, const Shape& shape,
                                                   std::optional<Algorithm> algorithm,
                                                   const LibraryChoice& library, int stream) {
  return start(device, {call, dtype, shape}, false,
               Arrival{Array(), algorithm, library, stream, 0});
}

// The device's next collective: matched with the other devices' by issue index, its buffers
// held from now on the device's clock, ordered after its stream's previous collective; the
// group starts once every member has started it (and its stream allows).
SimRun::StartedIndex SimRun::start(int device, const StartedCallView& called, bool with_data,
                                   Arrival arrival) {
  Device& self = *devices_[static_cast<std::size_t>(device)];
  if (abort_message_) throw DeadlockError(*abort_message_);
  const int index = self.next_index++;
  arrival.time_ps = self.clock_ps;
  Slot& slot = slot_for(index, called.call);
  if (!slot.started) {
    slot.started = called.copy();
    slot.with_data = with_data;
  }
  InFlight flight;
  flight.started = slot.started;
  flight.stream = arrival.stream;
  flight.called_ps = self.clock_ps;
  const StartedCall& first = *slot.started;
  const bool agrees = first.call == called.call && first.dtype == called.dtype &&
                      first.shape == called.shape && slot.with_data == with_data;
  if (!agrees) {
    // Reported as waiting in it, as a blocking collective would.
    flight.started = called.copy();
    self.in_flight.emplace(index, std::move(flight));
    self.phase = Phase::waiting;
    self.waiting_in = index;
    abort(fmt::format("deadlock: devices disagree at collective #{}: {}", index, stuck_report()));
    throw DeadlockError(*abort_message_);
  }
  const int group = slot.group_of[static_cast<std::size_t>(device)];
  if (group >= 0) hold_buffers(device, slot, group, arrival.algorithm, flight);
  self.in_flight.emplace(index, std::move(flight));
  if (group >= 0 && arrival.stream >= 0) follow_stream(self, slot, group, index, arrival.stream);
  slot.earliest_arrival_ps = std::min(slot.earliest_arrival_ps, arrival.time_ps);
  slot.arrivals.emplace(device, std::move(arrival));
  if (group >= 0) {
    ++slot.arrived_in_group[static_cast<std::size_t>(group)];
    group_ready(index, slot, group);
  }
  return {index, slot.started};
}

SimRun::Slot& SimRun::slot_for(int index, const CollectiveCall& call) {
  std::unique_ptr<Slot>& slot_pointer = slots_[index];
  if (slot_pointer) return *slot_pointer;
  slot_pointer = std::make_unique<Slot>();
  Slot& slot = *slot_pointer;
  slot.groups = collective_groups(mesh_, call);
  slot.axis_size = collective_axis_size(mesh_, call);
  slot.group_of.assign(static_cast<std::size_t>(device_count_), -1);
  for (std::size_t g = 0; g < slot.groups.size(); ++g) {
    for (int member : slot.groups[g]) {
      slot.group_of[static_cast<std::size_t>(member)] = static_cast<int>(g);
    }
  }
  const std::size_t groups = slot.groups.size();
  slot.arrived_in_group.assign(groups, 0);
  slot.stream_blocked.assign(groups, 0);
  slot.stream_ready_ps.assign(groups, 0);
  slot.buffer_bytes.assign(groups, -1);
  slot.start_ps.assign(groups, 0);
  if (const auto& mirror = machine_.options().mirror) {
    for (const std::vector<int>& members : slot.groups) {
      slot.mirrored.push_back(mirror->full_group(call, members));
    }
  }
  return slot;
}

PlacedGroup SimRun::placed_group(const Slot& slot, int group) const {
  const auto g = static_cast<std::size_t>(group);
  return slot.mirrored.empty() ? placement_.group(slot.groups[g]) : slot.mirrored[g].placed;
}

int SimRun::group_axis_size(const Slot& slot, int group) const {
  return slot.mirrored.empty() ? slot.axis_size
                               : slot.mirrored[static_cast<std::size_t>(group)].axis_size;
}

// The group's work and receive buffers (schedule_buffer_bytes), computed once per group from
// the plan of its first member to start it, held on this device at its clock.
void SimRun::hold_buffers(int device, Slot& slot, int group, std::optional<Algorithm> algorithm,
                          InFlight& flight) {
  std::int64_t& bytes = slot.buffer_bytes[static_cast<std::size_t>(group)];
  if (bytes < 0) {
    const StartedCall& called = *slot.started;
    const CollectivePlan plan = plan_collective(
        called.call, called.dtype, called.shape, placed_group(slot, group),
        group_axis_size(slot, group), algorithm_choice(collective_kind(called.call.op), algorithm));
    bytes = schedule_buffer_bytes(*machine_.steps(plan.algorithm, plan.shape),
                                  plan.shape.element_bytes);
  }
  const Device& self = *devices_[static_cast<std::size_t>(device)];
  memory_.allocate(placement_.device(device), bytes, self.clock_ps,
                   [&flight] { return flight.call_text() + " buffers"; });
  flight.buffer_bytes = bytes;
}

// Stream k: the group may start only once this device's previous collective on k has finished.
void SimRun::follow_stream(Device& self, Slot& slot, int group, int index, int stream) {
  Device::StreamTail& tail = self.streams[stream];
  const auto g = static_cast<std::size_t>(group);
  if (tail.last >= 0 && !tail.done) {
    self.in_flight.at(tail.last).stream_next = index;
    ++slot.stream_blocked[g];
  } else {
    slot.stream_ready_ps[g] = std::max(slot.stream_ready_ps[g], tail.end_ps);
  }
  tail = {index, false, 0};
}

// Schedules the group's start once every member has started it and no member's stream holds
// it back: at the latest of their start calls and their streams' previous ends.
void SimRun::group_ready(int index, Slot& slot, int group) {
  const auto g = static_cast<std::size_t>(group);
  const std::vector<int>& members = slot.groups[g];
  if (slot.arrived_in_group[g] != static_cast<int>(members.size()) || slot.stream_blocked[g] > 0) {
    return;
  }
  std::int64_t start_ps = std::max(events_.now_ps(), slot.stream_ready_ps[g]);
  for (int member : members) start_ps = std::max(start_ps, slot.arrivals.at(member).time_ps);
  events_.schedule(start_ps, [this, index, group] { start_group(index, group); });
}

Array SimRun::wait_collective(int device, int index) {
  Device& self = *devices_[static_cast<std::size_t>(device)];
  if (running_device_ != device) {
    throw Error(fmt::format("PendingCollective::wait: collective #{} started on device {} waited "
                            "on device {}; expected the device that started it",
                            index, device, running_device_));
  }
  if (abort_message_) throw DeadlockError(*abort_message_);
  auto it = self.in_flight.find(index);
  SPMD_CHECK(it != self.in_flight.end(),
             fmt::format("device {} waits for collective #{}, which it has not started", device,
                         index));
  const std::int64_t called_ps = self.clock_ps;
  if (!it->second.done) {
    self.phase = Phase::waiting;
    self.waiting_in = index;
    block(device);
    if (!it->second.done) throw DeadlockError(*abort_message_);  // released by an abort
  }
  InFlight flight = std::move(it->second);
  self.in_flight.erase(it);
  SPMD_CHECK(std::max(self.clock_ps, flight.end_ps) >= called_ps, "a device clock went back");
  self.clock_ps = std::max(self.clock_ps, flight.end_ps);
  self.exposed_ps += self.clock_ps - called_ps;
  memory_.release(placement_.device(device), flight.buffer_bytes, self.clock_ps);
  settle_overlap(self);
  if (flight.error) std::rethrow_exception(flight.error);
  return std::move(flight.result);
}

// A collective the device starts later begins no earlier than its start call, so nothing can
// reach before the device's clock or the start call of any collective it has in flight.
void SimRun::settle_overlap(Device& self) {
  if (!self.overlap.folding_due()) return;
  std::int64_t settled_ps = self.clock_ps;
  for (const auto& [index, flight] : self.in_flight) {
    settled_ps = std::min(settled_ps, flight.called_ps);
  }
  self.overlap.settle_before(settled_ps);
}

SimRun::DeviceCollectives SimRun::device_collectives(int device) const {
  const Device& self = *devices_[static_cast<std::size_t>(device)];
  DeviceCollectives out;
  for (const auto& [index, flight] : self.in_flight) {
    if (!flight.done) out.in_flight.push_back(index);
  }
  out.blocked_on = self.phase == Phase::waiting ? self.waiting_in : -1;
  out.finished = self.phase == Phase::finished || self.phase == Phase::failed;
  return out;
}

AlgorithmChoice SimRun::base_choice(const Machine& machine) {
  const topology::Topology& topology = machine.topology();
  AlgorithmChoice choice;
  choice.topology_traits = topology.traits();
  choice.ring_order = DeviceRing(topology.ring_order());
  choice.ring_by_rank = machine.options().ring_by_rank;
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
  // JAX runs every collective on every device of the mesh, so one that a device finished
  // without can never complete, even where the groups it would not have joined could: it does
  // not start, its devices stay waiting, and the run ends in the reference's deadlock report.
  if (index >= finished_after_) return;
  Slot& slot = *slots_.at(index);
  const std::vector<int>& members = slot.groups[static_cast<std::size_t>(group)];
  const Arrival& first_arrival = slot.arrivals.at(members.front());
  const StartedCall& first = *slot.started;
  const AlgorithmChoice& choice =
      algorithm_choice(collective_kind(first.call.op), first_arrival.algorithm);
  const PlacedGroup placed = placed_group(slot, group);
  // In a run of representatives, the full group's size (members are its representatives).
  const int n = static_cast<int>(placed.devices.size());
  const bool mirrored = n != static_cast<int>(members.size());
  const CollectivePlan plan = plan_collective(first.call, first.dtype, first.shape, placed,
                                              group_axis_size(slot, group), choice);
  const int element_bytes = static_cast<int>(dtype_size_bytes(first.dtype));
  const std::int64_t input_bytes = plan.shape.elements * element_bytes;
  const std::int64_t nccl_bytes =
      first.call.op == CollectiveOp::all_gather ? input_bytes * n : input_bytes;
  // Faults act on links and devices, which the library's closed form does not see: a run with
  // faults carries every collective on the links.
  const int ranks_per_node = group_ranks_per_node(machine_.spec(), placed.devices);
  if (slot.library_group_size != n || slot.library_ranks_per_node != ranks_per_node) {
    slot.library_group_size = n;
    slot.library_ranks_per_node = ranks_per_node;
    slot.library =
        faults_.changes_collectives()
            ? std::nullopt
            : library_timing(machine_.spec(), first.call.op, nccl_bytes, element_bytes,
                             {.ranks = n, .ranks_per_node = ranks_per_node},
                             first_forced({first_arrival.library, machine_.options().library,
                                           machine_.spec().library}));
  }
  const std::optional<cost_model::TimedChoice>& library = slot.library;

  if (!slot.record_started) {
    slot.record_started = true;
    CollectiveRecord& record = slot.record;
    record.index = index;
    record.op = std::string(collective_op_name(first.call.op));
    record.call = first.call.to_string();
    record.axes = first.call.axes.to_string();
    record.dtype = std::string(dtype_name(first.dtype));
    record.shape = shape_string(first.shape);
    record.bytes = nccl_bytes;
    record.algorithm = library ? library->label()
                               : std::string(collectives::algorithm_name(plan.algorithm));
    record.algorithm_note =
        library ? library_note(*library, first.call.op) : plan.algorithm_note;
    record.groups = slot.mirrored.empty() ? static_cast<int>(slot.groups.size())
                                          : slot.mirrored.front().groups;
    record.group_size = n;
    record.with_data = slot.with_data;
    record.issue_ps = slot.earliest_arrival_ps;
    record.start_ps = events_.now_ps();
    record.end_ps = events_.now_ps();
    ++log_.collective_count;
    if (log_.collectives.size() < machine_.options().log_record_limit) {
      slot.logged_at = log_.collectives.size();
      log_.collectives.push_back(record);
    }
  }

  slot.start_ps[static_cast<std::size_t>(group)] = events_.now_ps();
  if (std::exception_ptr failed = device_failure(index, group)) {
    finish_group(index, group, {}, failed);
    return;
  }
  auto results = std::make_shared<std::vector<Array>>();
  if (slot.with_data) {
    std::vector<Array> inputs;
    for (int member : members) inputs.push_back(slot.arrivals.at(member).input);
    *results = group_results(first.call, plan, *machine_.schedule(plan.algorithm, plan.shape),
                             inputs, machine_.options().numerics);
  }
  ScheduleRunSetup setup{machine_.steps(plan.algorithm, plan.shape),
                         placed.devices,
                         plan.shape.element_bytes,
                         [started = slot.started, index] {
                           return fmt::format("{} (collective #{})", started->call.to_string(),
                                              index);
                         },
                         slot.logged_at ? static_cast<int>(*slot.logged_at) : -1,
                         nullptr,
                         0};
  setup.hold_buffers = false;  // each member holds them from its start call to its wait
  if (machine_.options().record_link_transfers > 0) {
    setup.transfer_log = &log_;
    setup.transfer_limit = machine_.options().record_link_transfers;
  }
  ScheduleDone done = [this, index, group, results](std::exception_ptr error) {
    finish_group(index, group, std::move(*results), error);
  };
  // Members that are not simulated cannot carry messages: a mirrored group needs the library's
  // time, which workloads/symmetric_step.cc makes sure of before it runs representatives.
  SPMD_CHECK(!mirrored || library || n <= 1,
             fmt::format("collective #{} ({}) has a mirrored group of {} and no library time",
                         index, first.call.to_string(), n));
  const std::optional<std::int64_t> closed_form_ps =
      library ? std::optional<std::int64_t>(library->time_ps)
              : fast_path_time_ps(index, plan, members, placed.devices);
  if (closed_form_ps) {
    ++log_.closed_form_groups;
    start_closed_form_run(std::move(setup), events_.now_ps(), *closed_form_ps, events_, memory_,
                          std::move(done));
    return;
  }
  start_schedule_run(std::move(setup), events_.now_ps(), events_, links_, memory_,
                     std::move(done));
}

// The fast path's condition 4 (sim/fast_path.h). Events run only while every fiber is blocked,
// so a member can start nothing new before it wakes. It wakes no earlier than this group's end
// when it waits in this collective or in one queued behind it on the same stream; then what it
// has in flight is all it can have before the end, and that must be this collective or queued
// behind it. On a topology of private routes nobody else uses the members' links; on the others
// only a group of every device is sure to be alone.
bool SimRun::runs_alone(int index, const std::vector<int>& members) const {
  if (!choice_.topology_traits.private_routes &&
      static_cast<int>(members.size()) != machine_.topology().device_count()) {
    return false;
  }
  for (int member : members) {
    const Device& device = *devices_[static_cast<std::size_t>(member)];
    const bool done = device.phase == Phase::finished || device.phase == Phase::failed;
    if (!done && !(device.phase == Phase::waiting && starts_after(device, index, device.waiting_in))) {
      return false;
    }
    for (const auto& [other, flight] : device.in_flight) {
      if (!flight.done && !starts_after(device, index, other)) return false;
    }
  }
  return true;
}

// A failed-device fault (sim/faults.h): the group's collective fails when one of its members'
// devices has failed by now (at its start, or while it ran: then at its end). The error names
// the device and the members that waited for it.
std::exception_ptr SimRun::device_failure(int index, int group) const {
  const std::vector<int>& members = slots_.at(index)->groups[static_cast<std::size_t>(group)];
  for (int member : members) {
    const int on = placement_.device(member);
    const std::optional<std::int64_t> failed_ps = faults_.device_failure_ps(on);
    if (!failed_ps || *failed_ps > events_.now_ps()) continue;
    std::vector<int> waiters;
    for (int other : members) {
      if (other != member) waiters.push_back(other);
    }
    const std::string device =
        on == member ? fmt::format("device {}", member)
                     : fmt::format("device {} (machine device {})", member, on);
    const InFlight& flight = devices_[static_cast<std::size_t>(member)]->in_flight.at(index);
    return std::make_exception_ptr(Error(fmt::format(
        "{} (collective #{}) failed: {} failed at {} (failed_device fault); device{} {} waited",
        flight.what(), index, device,
        format_duration_ps(*failed_ps + machine_.fault_origin_ps()),
        waiters.size() == 1 ? "" : "s", fmt::join(waiters, ", "))));
  }
  return nullptr;
}

// Whether `later` is `index` itself or queued behind it on the device's stream.
bool SimRun::starts_after(const Device& device, int index, int later) {
  for (int at = index; at != -1;) {
    if (at == later) return true;
    const auto it = device.in_flight.find(at);
    at = it == device.in_flight.end() || it->second.stream < 0 ? -1 : it->second.stream_next;
  }
  return false;
}

// `members` by mesh device, `devices` the machine devices they run on.
std::optional<std::int64_t> SimRun::fast_path_time_ps(int index, const CollectivePlan& plan,
                                                      const std::vector<int>& members,
                                                      const std::vector<int>& devices) {
  // Faults on links or devices change what the closed form assumes: every group is carried.
  if (!machine_.options().fast_path || faults_.changes_collectives() ||
      !runs_alone(index, members)) {
    return std::nullopt;
  }
  return closed_form_time_on_links_ps(plan, devices, links_);
}

void SimRun::finish_group(int index, int group, std::vector<Array> results,
                          std::exception_ptr error) {
  Slot& slot = *slots_.at(index);
  const std::vector<int>& members = slot.groups[static_cast<std::size_t>(group)];
  if (!error) error = device_failure(index, group);
  for (std::size_t r = 0; r < members.size(); ++r) {
    // Cost-only runs have no results: their zeros were made at the start.
    finish_member(index, group, members[r], r < results.size() ? &results[r] : nullptr, error);
  }
  CollectiveRecord& record = slot.logged_at ? log_.collectives[*slot.logged_at] : slot.record;
  record.issue_ps = std::min(record.issue_ps, slot.earliest_arrival_ps);
  record.end_ps = std::max(record.end_ps, events_.now_ps());
  set_bandwidths(record);
  if (++slot.groups_done == static_cast<int>(slot.groups.size())) {
    log_.collective_time_ps = checked_add(log_.collective_time_ps, record.end_ps - record.start_ps,
                                          [] { return std::string("the run's collective time in ps"); });
    slots_.erase(index);
  }
}

// The collective is done on `device`: its result waits for the device's wait (woken if it
// waits for this one), and its stream's next collective may go.
void SimRun::finish_member(int index, int group, int device, Array* result,
                           std::exception_ptr error) {
  Device& member = *devices_[static_cast<std::size_t>(device)];
  InFlight& flight = member.in_flight.at(index);
  flight.done = true;
  flight.end_ps = events_.now_ps();
  flight.error = error;
  if (!error && result != nullptr) flight.result = std::move(*result);
  member.overlap.add_busy(
      {slots_.at(index)->start_ps[static_cast<std::size_t>(group)], events_.now_ps()});
  if (flight.stream >= 0) {
    Device::StreamTail& tail = member.streams[flight.stream];
    if (tail.last == index) tail = {index, true, events_.now_ps()};
    if (flight.stream_next >= 0) stream_predecessor_done(device, flight.stream_next);
  }
  if (member.phase == Phase::waiting && member.waiting_in == index) wake(device);
}

// `device`'s previous collective on the stream of collective `index` has finished.
void SimRun::stream_predecessor_done(int device, int index) {
  Slot& slot = *slots_.at(index);
  const int group = slot.group_of[static_cast<std::size_t>(device)];
  const auto g = static_cast<std::size_t>(group);
  --slot.stream_blocked[g];
  slot.stream_ready_ps[g] = std::max(slot.stream_ready_ps[g], events_.now_ps());
  group_ready(index, slot, group);
}

void SimRun::block(int device) {
  Device& self = *devices_[static_cast<std::size_t>(device)];
  --ready_;
  std::unique_lock lock(mutex_);
  self.wake.wait(lock, [&] { return self.woken; });
  note_running_on(stacks_[static_cast<std::size_t>(device)]);
  self.woken = false;
  running_device_ = device;
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
  // The clock must hold the span before a straggler fault stretches it too.
  checked_add(self.clock_ps, time_ps, [&] {
    return fmt::format("simulated time in ps of device {} after {} FLOPs", device, flops);
  });
  const std::int64_t end_ps =
      faults_.compute_end_ps(placement_.device(device), self.clock_ps, time_ps);
  self.overlap.add_compute({self.clock_ps, end_ps});
  if (log_.compute_spans.size() < machine_.options().log_record_limit) {
    log_.compute_spans.push_back({device, self.clock_ps, end_ps, flops, bytes_moved});
  } else {
    log_.compute_spans_truncated = true;
  }
  self.clock_ps = end_ps;
  settle_overlap(self);
}

void SimRun::hold_memory(int device, std::int64_t bytes, const std::string& what) {
  if (bytes < 0) {
    throw Error(fmt::format("hold_memory: {} bytes for {} on device {}, expected >= 0", bytes, what,
                            device));
  }
  memory_.allocate(placement_.device(device), bytes,
                   devices_[static_cast<std::size_t>(device)]->clock_ps, what);
}

void SimRun::release_memory(int device, std::int64_t bytes) {
  const std::int64_t in_use = memory_.in_use_bytes(placement_.device(device));
  if (bytes < 0 || bytes > in_use) {
    throw Error(
        fmt::format("release_memory: {} bytes on device {}, expected at most the {} bytes in use",
                    bytes, device, in_use));
  }
  memory_.release(placement_.device(device), bytes,
                  devices_[static_cast<std::size_t>(device)]->clock_ps);
}

// ---- Reports

std::string SimRun::device_phrase(int device) const {
  const Device& self = *devices_[static_cast<std::size_t>(device)];
  std::string phrase;
  switch (self.phase) {
    case Phase::running: phrase = "runs"; break;
    case Phase::finished:
      return fmt::format("finished after {} collective(s)", self.next_index);
    case Phase::failed: return "failed with an error";
    case Phase::waiting:
      phrase = fmt::format("waits in {} (collective #{})",
                           self.in_flight.at(self.waiting_in).what(), self.waiting_in);
      break;
  }
  // The collectives it started and has not waited for, besides the one it waits in.
  std::string pending;
  for (const auto& [index, flight] : self.in_flight) {
    if (index == self.waiting_in) continue;
    pending += fmt::format("{}#{} {}", pending.empty() ? "" : ", ", index, flight.call_text());
  }
  return pending.empty() ? phrase : phrase + "; pending: " + pending;
}

// Devices that finished after different numbers of collectives, when the groups of the later
// ones had already run before the first of them finished: the report the reference gives, where
// those devices wait in the first collective the others never reached.
std::optional<std::string> SimRun::left_behind_report() const {
  if (finished_after_ == std::numeric_limits<int>::max()) return std::nullopt;
  bool all_equal = true;
  for (const std::unique_ptr<Device>& device : devices_) {
    all_equal = all_equal && device->next_index == finished_after_;
  }
  if (all_equal) return std::nullopt;
  const auto slot = slots_.find(finished_after_);
  std::vector<std::string> phrases;
  for (int d = 0; d < device_count_; ++d) {
    const Device& device = *devices_[static_cast<std::size_t>(d)];
    const StartedCall* arrival = nullptr;  // what d started, if it has
    if (slot != slots_.end() && slot->second->arrivals.contains(d)) {
      arrival = slot->second->started.get();
    }
    if (device.next_index == finished_after_) {
      phrases.push_back(device_phrase(d));  // "finished after N collective(s)"
    } else if (arrival != nullptr) {
      phrases.push_back(fmt::format("waits in {} of {}{} (collective #{})",
                                    arrival->call.to_string(), dtype_name(arrival->dtype),
                                    shape_string(arrival->shape), finished_after_));
    } else {
      phrases.push_back(fmt::format("started collective #{}", finished_after_));
    }
  }
  return "deadlock: no device can proceed: " + grouped_device_report(phrases);
}

std::string SimRun::stuck_report() const {
  std::vector<std::string> phrases;
  for (int d = 0; d < device_count_; ++d) phrases.push_back(device_phrase(d));
  return grouped_device_report(phrases);
}

// Per device: exposed communication (time blocked in waits), communication in flight (the
// union of its groups' [start, end)) and the part of it its compute spans cover; one step.
void SimRun::log_device_figures() {
  StepRecord step;
  for (const std::unique_ptr<Device>& device_pointer : devices_) {
    const Device& device = *device_pointer;
    const std::int64_t overlapped = device.overlap.overlapped_communication_ps();
    log_.exposed_communication_ps.push_back(device.exposed_ps);
    log_.communication_in_flight_ps.push_back(device.overlap.communication_in_flight_ps());
    log_.overlapped_communication_ps.push_back(overlapped);
    step.device_end_ps.push_back(device.clock_ps);
    step.exposed_communication_ps.push_back(device.exposed_ps);
    step.overlapped_communication_ps.push_back(overlapped);
  }
  step.end_ps = log_.end_ps;
  log_.steps.push_back(std::move(step));
}

// The faults whose time lies within this run (from its start to its end), by time.
void SimRun::log_faults() {
  for (const FaultPlan::Timed& timed : faults_.faults()) {
    if (timed.at_ps < 0 || timed.at_ps > log_.end_ps) continue;
    const Fault& fault = timed.fault;
    log_.faults.push_back({std::string(fault_kind_name(fault.kind)), fault_description(fault),
                           fault.device, fault.link_from, fault.link_to, timed.at_ps});
  }
  std::stable_sort(log_.faults.begin(), log_.faults.end(),
                   [](const FaultEvent& a, const FaultEvent& b) { return a.at_ps < b.at_ps; });
}

CostLog SimRun::take_cost_log() {
  log_.end_ps = 0;
  log_.compute_ps.clear();
  for (int d = 0; d < device_count_; ++d) {
    const Device& device = *devices_[static_cast<std::size_t>(d)];
    log_.compute_ps.push_back(device.overlap.compute_ps());
    const std::int64_t clock = device.clock_ps;
    log_.device_end_ps.push_back(clock);
    log_.end_ps = std::max(log_.end_ps, clock);
    const int on = placement_.device(d);
    log_.memory.push_back(
        {memory_.peak_bytes(on), memory_.timeline(on), memory_.timeline_truncated(on)});
  }
  // The log names mesh devices; transfers were recorded between machine devices.
  for (LinkTransferRecord& t : log_.transfers) {
    t.from_device = placement_.mesh_device(t.from_device);
    t.to_device = placement_.mesh_device(t.to_device);
  }
  log_device_figures();
  log_faults();
  log_.link_transfers = links_.transfers();
  log_.placement = placement_.text();
  return std::move(log_);
}

}  // namespace spmd::sim
