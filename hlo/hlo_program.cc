#include "hlo/hlo_program.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "hlo/hlo_cost.h"
#include "hlo/hlo_memory.h"
#include "hlo/while_trip_count.h"
#include "reference/error.h"

namespace spmd::hlo {
namespace {

// The branch a conditional runs: the most FLOPs, then the most bytes, then the first listed.
const HloComputation& chosen_branch(const HloModule& module, const HloInstruction& conditional) {
  const std::vector<std::string> names = conditional_branches(conditional);
  if (names.empty()) {
    module.fail(conditional, fmt::format("{} (conditional): expected branch_computations or "
                                         "true_computation / false_computation",
                                         conditional.name));
  }
  const HloComputation* best = nullptr;
  double best_flops = -1;
  std::int64_t best_bytes = -1;
  for (const std::string& name : names) {
    const HloComputation& branch = module.called(name, conditional);
    const double flops = computation_flops(module, branch);
    std::int64_t bytes = 0;
    for (const HloInstruction& instruction : branch.instructions) {
      if (op_kind(module, instruction) == OpKind::compute) {
        bytes += compute_cost(module, branch, instruction).bytes;
      }
    }
    if (flops > best_flops || (flops == best_flops && bytes > best_bytes)) {
      best = &branch;
      best_flops = flops;
      best_bytes = bytes;
    }
  }
  return *best;
}

// The collective an async-start wraps (its called computation's root), or nullptr for other work.
const HloInstruction* wrapped_collective(const HloModule& module, const HloInstruction& start) {
  const HloInstruction& root = module.called_by("calls", start).root();
  return op_kind(module, root) == OpKind::collective ? &root : nullptr;
}

// Walks the instructions of a step as every device runs them; the visitor gets each instruction
// with its computation, and does the work (Visitor::compute, collective, start, done).
template <class Visitor>
void walk(const HloModule& module, const HloComputation& computation, Visitor& visitor) {
  for (const HloInstruction& instruction : computation.instructions) {
    switch (op_kind(module, instruction)) {
      case OpKind::no_work:
      case OpKind::async_update: break;
      case OpKind::compute: visitor.compute(computation, instruction); break;
      case OpKind::collective: visitor.collective(computation, instruction); break;
      case OpKind::collective_start: visitor.start(computation, instruction, instruction); break;
      case OpKind::async_start: {
        const HloComputation& wrapped = module.called_by("calls", instruction);
        if (const HloInstruction* collective = wrapped_collective(module, instruction)) {
          visitor.start(wrapped, *collective, instruction);
        } else {
          walk(module, wrapped, visitor);  // other asynchronous work: charged at its start
        }
        break;
      }
      case OpKind::collective_done:
      case OpKind::async_done: visitor.done(computation, instruction); break;
      case OpKind::while_loop: {
        const std::int64_t trips = while_trip_count(module, computation, instruction);
        const HloComputation& condition = module.called_by("condition", instruction);
        const HloComputation& body = module.called_by("body", instruction);
        for (std::int64_t trip = 0; trip < trips; ++trip) {
          walk(module, condition, visitor);
          walk(module, body, visitor);
        }
        walk(module, condition, visitor);  // the test that ends the loop
        break;
      }
      case OpKind::call: walk(module, module.called_by("to_apply", instruction), visitor); break;
      case OpKind::conditional: walk(module, chosen_branch(module, instruction), visitor); break;
    }
  }
}

// The -start a -done (or async-done) finishes: its operand, through any async-update.
const HloInstruction& start_for(const HloModule& module, const HloComputation& computation,
                                const HloInstruction& done) {
  const HloInstruction* at = &module.operand(computation, done, 0);
  while (at->opcode == "async-update") at = &module.operand(computation, *at, 0);
  return *at;
}

class CollectiveLister {
 public:
  CollectiveLister(const HloModule& module, CpuPromotion promotion)
      : module_(module), promotion_(promotion) {}
  void compute(const HloComputation&, const HloInstruction&) {}
  void collective(const HloComputation& computation, const HloInstruction& instruction) {
    collectives.push_back(import_collective(module_, computation, instruction, promotion_));
  }
  void start(const HloComputation& computation, const HloInstruction& collective,
             const HloInstruction&) {
    collectives.push_back(import_collective(module_, computation, collective, promotion_));
  }
  void done(const HloComputation&, const HloInstruction&) {}

  std::vector<ImportedCollective> collectives;

 private:
  const HloModule& module_;
  CpuPromotion promotion_;
};

class DeviceRun {
 public:
  DeviceRun(Context& context, const HloModule& module, const HloRunOptions& options)
      : context_(context), module_(module), options_(options) {}

  void compute(const HloComputation& computation, const HloInstruction& instruction) {
    const ComputeCost cost = compute_cost(module_, computation, instruction);
    const double bytes = std::ceil(static_cast<double>(cost.bytes) / options_.memory_efficiency);
    context_.charge_compute(cost.flops / options_.compute_efficiency,
                            static_cast<std::int64_t>(bytes));
  }

  void collective(const HloComputation& computation, const HloInstruction& instruction) {
    const ImportedCollective imported =
        import_collective(module_, computation, instruction, options_.cpu_promotion);
    at_line(instruction, [&] {
      context_.collective_cost(imported.call, imported.dtype, imported.shape);
    });
  }

  // XLA runs asynchronous collectives in order on one communication stream.
  void start(const HloComputation& computation, const HloInstruction& collective,
             const HloInstruction& start) {
    const ImportedCollective imported =
        import_collective(module_, computation, collective, options_.cpu_promotion);
    at_line(start, [&] {
      pending_.emplace(&start, context_.collective_cost_start(imported.call, imported.dtype,
                                                              imported.shape, {.stream = 0}));
    });
  }

  void done(const HloComputation& computation, const HloInstruction& done) {
    const HloInstruction& start = start_for(module_, computation, done);
    const auto found = pending_.find(&start);
    if (found == pending_.end()) {
      if (start.opcode == "async-start") return;  // other asynchronous work, charged at its start
      module_.fail(done, fmt::format("{} ({}): operand '{}', expected a started collective not yet "
                                     "finished", done.name, done.opcode, start.name));
    }
    at_line(done, [&] { found->second.wait(); });
    pending_.erase(found);
  }

  void check_all_done() const {
    if (pending_.empty()) return;
    const HloInstruction& start = *pending_.begin()->first;
    module_.fail(start, fmt::format("{} ({}): never finished, expected a matching -done",
                                    start.name, start.opcode));
  }

 private:
  // Errors of the simulator's checks, with the HLO line.
  template <class Action>
  void at_line(const HloInstruction& instruction, Action action) {
    try {
      action();
    } catch (const Error& e) {
      module_.fail(instruction, fmt::format("{} ({}): {}", instruction.name, instruction.opcode, e.what()));
    }
  }

  Context& context_;
  const HloModule& module_;
  const HloRunOptions& options_;
  std::map<const HloInstruction*, PendingCollective> pending_;
};

void check_options(const HloRunOptions& options) {
  const auto fraction = [](double value, std::string_view name) {
    if (!(value > 0 && value <= 1)) {
      throw Error(fmt::format("{}: {}, expected a fraction in (0, 1]", name, value));
    }
  };
  fraction(options.compute_efficiency, "compute efficiency");
  fraction(options.memory_efficiency, "memory efficiency");
  if (options.steps < 1) throw Error(fmt::format("steps: {}, expected a positive integer", options.steps));
}

}  // namespace

std::vector<ImportedCollective> step_collectives(const HloModule& module, CpuPromotion promotion) {
  CollectiveLister lister(module, promotion);
  walk(module, module.entry_computation(), lister);
  return std::move(lister.collectives);
}

sim::CostLog run_hlo_module(sim::Machine& machine, const HloModule& module,
                            const HloRunOptions& options) {
  check_options(options);
  if (machine.device_count() != module.device_count()) {
    throw Error(fmt::format("{}: replica_count {} × num_partitions {} = {} devices, expected the "
                            "machine's {} devices",
                            module.file, module.replica_count, module.num_partitions,
                            module.device_count(), machine.device_count()));
  }
  const std::int64_t memory_bytes = module_memory(module).peak_bytes;
  step_collectives(module);  // reads every collective once, so errors come before the run
  const Mesh mesh({module.device_count()}, {kDevicesAxis});
  const DeviceFunction step = [&](Context& context, const Values&) {
    context.hold_memory(memory_bytes, fmt::format("{} buffers (live-range peak)", module.file));
    DeviceRun run(context, module, options);
    walk(module, module.entry_computation(), run);
    run.check_all_done();
    context.release_memory(memory_bytes);
    return Values{};
  };
  const std::vector<Values> inputs(static_cast<std::size_t>(module.device_count()));
  sim::CostLog total;
  for (int s = 0; s < options.steps; ++s) {
    machine.run(mesh, inputs, step, false);
    sim::append_run(total, machine.cost_log());
  }
  return total;
}

}  // namespace spmd::hlo
