#include "cli/demo_command.h"

#include <fmt/format.h>

#include <iostream>

#include "backends/sim_backend.h"
#include "cli/algorithm_notes.h"
#include "cli/placement_flag.h"
#include "cli/run_outputs.h"
#include "examples/mlp.h"
#include "reference/reference_backend.h"
#include "sim/machine.h"
#include "sim/mesh_placement.h"
#include "support/units.h"
#include "traces/run_report.h"

namespace spmd {
namespace {

using collectives::Algorithm;

// Eight devices on a ring with two-way links; device numbers in the style of a mid-range
// accelerator. The MLP is tiny, so the all-reduces are latency-bound, as small ones are.
sim::MachineSpec demo_machine() {
  sim::MachineSpec spec;
  spec.name = "demo-ring: 8 devices on a bidirectional ring, 100 GB/s and 1 us per link";
  spec.devices = 8;
  spec.memory_bytes = std::int64_t{16} << 30;
  spec.peak_flops_per_s = 100e12;
  spec.memory_bandwidth_bytes_per_s = 1'000'000'000'000;
  spec.topology = topology::RingSpec{
      .devices = 8, .link = {.bandwidth_bytes_per_s = 100'000'000'000, .latency_ps = 1'000'000}};
  return spec;
}

bool bit_identical(const Values& a, const Values& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a[i].bitwise_equal(b[i])) return false;
  }
  return true;
}

void print_losses(const TrainingRun& run, std::ostream& out) {
  out << "step  loss (pmean over devices)\n";
  for (const TrainingStep& step : run.steps) {
    out << fmt::format("  {:2}  {:.6f}\n", step.step, static_cast<double>(step.loss));
  }
}

void print_costs(const sim::CostLog& log, int steps, std::ostream& out) {
  out << "memory peak per device:";
  for (std::size_t d = 0; d < log.memory.size(); ++d) {
    out << (d == 0 ? " " : ", ") << d << ": " << format_bytes(log.memory[d].peak_bytes);
  }
  out << '\n';
  std::int64_t all_reduce_ps = 0;
  const sim::CollectiveRecord* largest = nullptr;
  for (const sim::CollectiveRecord& r : log.collectives) {
    all_reduce_ps += r.end_ps - r.start_ps;
    if (largest == nullptr || r.bytes > largest->bytes) largest = &r;
  }
  const auto per_step = [steps](std::int64_t ps) { return ps / steps; };
  out << "all-reduce: " << log.collectives.size() / static_cast<std::size_t>(steps)
      << " pmean calls per step";
  if (largest != nullptr) out << " (" << largest->algorithm << ")";
  out << ", " << format_duration_ps(per_step(all_reduce_ps)) << " per step";
  if (largest != nullptr) {
    out << "; largest " << largest->call << " of " << largest->bytes
        << " B: " << format_duration_ps(largest->end_ps - largest->start_ps) << ", busbw "
        << fmt::format("{:.3f} GB/s", largest->busbw_bytes_per_s / 1e9);
  }
  out << '\n';
  const traces::RunTotals totals = traces::run_totals(log);
  out << "step time: " << format_duration_ps(per_step(totals.total_ps)) << " = compute "
      << format_duration_ps(per_step(totals.compute_ps)) << " + communication "
      << format_duration_ps(per_step(totals.communication_ps)) << " ("
      << fmt::format("{:.1f}% communication)\n", 100 * totals.communication_share);
}

}  // namespace

int run_demo_command(const DemoOptions& options, std::ostream& out) {
  MlpConfig config;
  config.steps = options.steps;
  const sim::MachineSpec spec = demo_machine();
  // Rings in rank order, so the reference's ring order is the simulator's on any placement; every
  // message carried one by one, since the demo's trace draws them all.
  sim::SimOptions sim_options{.algorithm = Algorithm::ring,
                              .ring_by_rank = true,
                              .record_link_transfers = 100'000,
                              .fast_path = false,
                              .placement = placement_from_flag(options.placement)};
  sim::Machine machine(spec, sim_options);
  // A placement that does not fit the mesh is an error before any output.
  const sim::MeshPlacement placement(sim_options.placement,
                                     Mesh({config.devices}, {config.axis_name}),
                                     machine.topology());
  out << "spmdsim demo: data-parallel training of a " << config.inputs << "-" << config.hidden
      << "-" << config.outputs << " MLP, pmap over " << config.devices
      << " devices, parameters replicated, batch sharded, gradients and loss pmean'd\n"
      << "machine: " << spec.name << "; " << format_bytes(spec.memory_bytes) << ", "
      << fmt::format("{:.0f} TFLOP/s per device\n\n", spec.peak_flops_per_s / 1e12);

  sim::CostLog log;
  const TrainingRun simulated =
      train_data_parallel(machine, config, [&] { sim::append_run(log, machine.cost_log()); });
  print_losses(simulated, out);

  bool replicas_identical = true;
  for (const TrainingStep& step : simulated.steps) replicas_identical &= step.replicas_identical;
  ReferenceBackend reference(order_for_algorithm(Algorithm::ring));
  const TrainingRun expected = train_data_parallel(reference, config);
  const bool equals_reference = bit_identical(simulated.params, expected.params);
  out << "\nreplicas: every device's parameters and loss bit-identical after every step: "
      << (replicas_identical ? "yes" : "NO") << '\n'
      << "reference: final parameters equal the reference backend's (sums folded in the ring "
         "algorithm's order) bit for bit: "
      << (equals_reference ? "yes" : "NO") << '\n';
  print_costs(log, config.steps, out);

  const RunOutputs written = write_run_outputs(options.out_folder, log, machine);
  out << "trace: " << written.trace_path
      << " (open it at https://ui.perfetto.dev); reports: collectives.csv, devices.csv, "
         "report.json in "
      << written.folder << '\n'
      << dropped_arrows_line(log, "the demo draws the first 100000");
  out.flush();
  AlgorithmNotes notes;
  notes.add(log);
  notes.print(std::cerr);
  return replicas_identical && equals_reference ? 0 : 1;
}

}  // namespace spmd
