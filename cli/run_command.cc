#include "cli/run_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <optional>

#include "cli/algorithm_notes.h"
#include "cli/machine_flags.h"
#include "cli/placement_flag.h"
#include "cli/run_memory.h"
#include "cli/run_outputs.h"
#include "hlo/cpu_promotion.h"
#include "hlo/hlo_module.h"
#include "hlo/hlo_sharding.h"
#include "reference/error.h"
#include "sim/machine.h"
#include "sim/machine_presets.h"
#include "support/units.h"
#include "traces/run_report.h"
#include "workloads/transformer_report.h"
#include "workloads/workload.h"

namespace spmd {
namespace {

void print_collectives(const sim::CostLog& log, std::ostream& out) {
  out << "collectives: " << log.collective_count;
  if (log.collectives.size() < log.collective_count) {
    out << " (the first " << log.collectives.size() << " in the logs and the trace)";
  }
  out << "\n";
  std::size_t shown = 0;
  for (const sim::CollectiveRecord& r : log.collectives) {
    if (++shown > 12) {
      out << "  ... (all of them in collectives.csv)\n";
      break;
    }
    out << "  " << r.call << " " << r.dtype << r.shape << " " << format_bytes(r.bytes) << " "
        << r.algorithm << ": " << format_duration_ps(r.end_ps - r.start_ps)
        << fmt::format(", algbw {:.2f} GB/s, busbw {:.2f} GB/s\n", r.algbw_bytes_per_s / 1e9,
                       r.busbw_bytes_per_s / 1e9);
  }
}

sim::MachineSpec run_machine(const RunOptions& options) {
  if (options.devices == 0) return machine_from_name_or_file(options.machine);
  MachineFlags flags;
  flags.machine = options.machine;
  return machine_with_devices(flags, options.devices);
}

}  // namespace

void add_run_flags(CLI::App& command, RunOptions& options) {
  command
      .add_option("MACHINE", options.machine,
                  fmt::format("A preset ({}) or a machine file", preset_names()))
      ->required();
  command
      .add_option("WORKLOAD", options.workload,
                  "A workload file (docs/workload-format.md) or an XLA HLO module's text "
                  "(docs/hlo-import.md)")
      ->required();
  command
      .add_option("-n,--devices", options.devices,
                  "Devices: a preset made for this many, or a machine file's topology rescaled "
                  "(default: the machine's own count)")
      ->check(CLI::Range(1, 1 << 20));
  command.add_option("--out", options.out_folder, "Folder for the trace and reports")
      ->capture_default_str();
  command.add_option("--algorithm", options.algorithm,
                     "Collective algorithm for every collective (default: the machine's choice)");
  add_library_choice_flags(command, options.library_algorithm, options.protocol);
  add_launch_flags(command, options.gpus_per_process, options.graph_launch);
  add_full_simulation_flag(command, options.full_simulation);
  add_placement_flag(command, options.placement);
  command.add_option("--link-sharing", options.link_sharing,
                     "How transfers on one link share it: fair or fifo (default: the machine's)");
  add_fault_flag(command, options.faults);
  command.add_flag("--show-sharding", options.show_sharding,
                   "HLO modules: draw which device holds which block of each input and output "
                   "(docs/sharding.md)");
  command
      .add_option("--trace-arrows", options.trace_arrows,
                  "Link messages drawn as arrows in the trace, the first N (0: none)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{100'000'000}))
      ->capture_default_str();
  command
      .add_option("--compute-efficiency", options.compute_efficiency,
                  "HLO modules: the fraction of peak FLOP/s their dots and convolutions reach")
      ->capture_default_str();
  command.add_flag("--keep-cpu-promotion", options.keep_cpu_promotion,
                   "HLO modules: time the bf16 collectives XLA:CPU promoted to f32 in f32, as "
                   "compiled (default: in bf16, as the program and a GPU compile have them)");
  command
      .add_option("--memory-efficiency", options.memory_efficiency,
                  "HLO modules: the fraction of memory bandwidth their ops reach")
      ->capture_default_str();
}

int run_run_command(const RunOptions& options, std::ostream& out) {
  const sim::MachineSpec spec =
      with_launch_flags(with_fault_flags(run_machine(options), options.faults),
                        options.gpus_per_process, options.graph_launch);
  sim::SimOptions sim_options{.cost_only = true,
                              .record_link_transfers =
                                  static_cast<std::size_t>(options.trace_arrows),
                              .placement = placement_from_flag(options.placement)};
  if (!options.algorithm.empty()) {
    sim_options.algorithm = collectives::algorithm_from_name(options.algorithm);
  }
  sim_options.library = library_choice_from_flags(options.library_algorithm, options.protocol);
  sim_options.fast_path = !options.full_simulation;
  sim_options.link_sharing = link_sharing_flag(options.link_sharing);
  // The machine's devices from the estimate, before it is built (cli/run_memory.h).
  check_run_fits_host(simulated_run_memory(spec, 0),
                      options.devices != 0
                          ? fmt::format("--devices {}", options.devices)
                          : fmt::format("{}: devices {}", options.machine, spec.devices));
  sim::Machine machine(spec, sim_options);
  // An HLO module is told by its first word, whatever the file's name.
  std::string name;
  int steps = 1;
  sim::CostLog log;
  std::optional<Workload> workload;
  std::string sharding_text;
  std::string promotion_note;  // HLO modules: what was done with XLA:CPU's promoted collectives
  if (hlo::is_hlo_file(options.workload)) {
    const hlo::HloModule module = hlo::load_hlo_file(options.workload);
    name = module.name;
    if (options.show_sharding) sharding_text = hlo::module_sharding_text(module);
    const hlo::CpuPromotion promotion =
        options.keep_cpu_promotion ? hlo::CpuPromotion::keep : hlo::CpuPromotion::undo;
    promotion_note = hlo::cpu_promotion_note(hlo::step_collectives(module, promotion), promotion);
    log = hlo::run_hlo_module(machine, module,
                              {.compute_efficiency = options.compute_efficiency,
                               .memory_efficiency = options.memory_efficiency,
                               .cpu_promotion = promotion});
  } else {
    if (options.show_sharding) {
      throw Error(fmt::format("--show-sharding: {} is a workload file, expected an HLO module "
                              "(built-in workloads run without arrays to draw)",
                              options.workload));
    }
    workload = load_workload_file(options.workload);
    name = workload->name;
    steps = workload->steps;
    log = run_workload(machine, *workload);
  }
  const traces::RunTotals totals = traces::run_totals(log);
  out << "spmdsim run: " << name << " (" << steps << " step" << (steps == 1 ? "" : "s")
      << ") on " << spec.name << ", " << spec.devices << " devices\n"
      << "placement: " << log.placement << "\n";
  if (options.show_sharding) out << sharding_text;
  print_collectives(log, out);
  out << promotion_note;
  for (const sim::FaultEvent& fault : log.faults) {
    out << "fault at " << format_duration_ps(fault.at_ps) << ": " << fault.description << "\n";
  }
  out << "time: " << format_duration_ps(totals.total_ps) << " = compute "
      << format_duration_ps(totals.compute_ps) << " + communication "
      << format_duration_ps(totals.communication_ps) << " ("
      << fmt::format("{:.1f}% communication)\n", 100 * totals.communication_share)
      << "step time: " << format_duration_ps(totals.step_ps) << "; exposed communication "
      << format_duration_ps(totals.exposed_communication_ps) << ", overlapped with compute "
      << format_duration_ps(totals.overlapped_communication_ps) << " of "
      << format_duration_ps(totals.communication_in_flight_ps) << " in flight (critical device "
      << totals.critical_device << ")\n"
      << "memory: peak " << format_bytes(totals.peak_memory_bytes) << " on device "
      << totals.peak_memory_device << " of " << format_bytes(spec.memory_bytes) << " per device\n";
  if (workload && workload->kind == WorkloadKind::transformer) {
    out << transformer_step_report(transformer_for_devices(workload->transformer, spec.devices),
                                   spec, totals.step_ps,
                                   totals.exposed_communication_ps / totals.steps);
  }
  const RunOutputs written = write_run_outputs(options.out_folder, log, machine);
  out << "trace: " << written.trace_path << "; reports: " << written.folder << "\n"
      << dropped_arrows_line(log, "--trace-arrows N keeps more");
  out.flush();
  AlgorithmNotes notes;
  notes.add(log);
  notes.print(std::cerr);
  return 0;
}

}  // namespace spmd
