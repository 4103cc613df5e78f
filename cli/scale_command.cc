#include "cli/scale_command.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "cli/algorithm_notes.h"
#include "cli/gnuplot.h"
#include "cli/placement_flag.h"
#include "cli/progress.h"
#include "reference/error.h"
#include "reference/input_file.h"
#include "sim/machine.h"
#include "support/output_file.h"
#include "traces/run_report.h"
#include "workloads/workload.h"

namespace spmd {
namespace {

struct ScalePoint {
  int devices = 0;
  double step_ms = 0;
  double communication_percent = 0;
  double all_reduce_busbw_gbps = 0;  // of the largest all-reduce (psum / pmean) in the run
  double memory_gib = 0;             // the largest device peak
  double exposed_ms = 0;             // per step, on the critical device: waited for
  double overlap_ms = 0;             // per step, on the critical device: hidden by compute
};

bool is_all_reduce(const std::string& op) {
  return op == "psum" || op == "pmean" || op == "pmax" || op == "pmin";
}

ScalePoint measure(const ScaleOptions& options, const Workload& workload, int devices,
                   AlgorithmNotes& notes) {
  const sim::MachineSpec spec = machine_with_devices(options.machine, devices);
  const sim::SimOptions sim_options = simulation_options(
      options.machine, {.cost_only = true, .placement = placement_from_flag(options.placement)});
  sim::Machine machine(spec, sim_options);
  const sim::CostLog log = run_workload(machine, workload);
  notes.add(log);
  const traces::RunTotals totals = traces::run_totals(log);
  ScalePoint point{devices, static_cast<double>(totals.total_ps) / 1e9 / workload.steps,
                   100 * totals.communication_share, 0,
                   static_cast<double>(totals.peak_memory_bytes) / (1 << 30),
                   static_cast<double>(totals.exposed_communication_ps) / 1e9 / workload.steps,
                   static_cast<double>(totals.overlapped_communication_ps) / 1e9 / workload.steps};
  std::int64_t largest = -1;
  for (const sim::CollectiveRecord& r : log.collectives) {
    if (is_all_reduce(r.op) && r.bytes > largest) {
      largest = r.bytes;
      point.all_reduce_busbw_gbps = r.busbw_bytes_per_s / 1e9;
    }
  }
  return point;
}

std::string table_row(const ScalePoint& p) {
  return fmt::format("{:8}  {:14.4f}  {:14.1f}  {:16.2f}  {:16.4f}  {:14.4f}  {:14.4f}",
                     p.devices, p.step_ms, p.communication_percent, p.all_reduce_busbw_gbps,
                     p.memory_gib, p.exposed_ms, p.overlap_ms);
}

// A 2x2 panel plot of the four columns against the device count (log scale).
std::string gnuplot_script(const std::string& data_path, const std::string& png_path,
                           const std::string& title) {
  std::string quoted_title;
  for (char c : title) quoted_title += c == '"' ? '\'' : c;
  return fmt::format(
      "set terminal pngcairo size 1200,900 font 'sans,10'\n"
      "set output '{png}'\n"
      "set multiplot layout 2,2 title \"{title}\"\n"
      "set logscale x 2\nset xlabel 'devices'\nset grid\nunset key\nset yrange [0:*]\n"
      "set title 'step time (ms)'\nplot '{data}' using 1:2 with linespoints pt 7\n"
      "set title 'communication share (%)'\nset yrange [0:100]\n"
      "plot '{data}' using 1:3 with linespoints pt 7\nset yrange [0:*]\n"
      "set title 'all-reduce busbw (GB/s)'\n"
      "plot '{data}' using 1:4 with linespoints pt 7\n"
      "set title 'memory per device (GiB)'\n"
      "plot '{data}' using 1:5 with linespoints pt 7\n"
      "unset multiplot\n",
      fmt::arg("png", png_path), fmt::arg("title", quoted_title), fmt::arg("data", data_path));
}

// The table as scale.dat in --out (created if missing); returns its path.
std::string write_table(const ScaleOptions& options, const std::string& table) {
  const std::filesystem::path dir(options.out_folder);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    throw Error(fmt::format("--out {}: cannot create the folder ({})",
                            path_for_message(options.out_folder), error.message()));
  }
  const std::string data = (dir / "scale.dat").string();
  write_output_file(data, table);
  return data;
}

std::string plot(const ScaleOptions& options, const std::string& data, const std::string& title) {
  const std::filesystem::path dir(options.out_folder);
  const std::string png = (dir / "scale.png").string();
  write_output_file(dir / "scale.gp", gnuplot_script(data, png, title));
  run_gnuplot(dir / "scale.gp", "--no-plot skips the plot");
  return png;
}

}  // namespace

void add_scale_flags(CLI::App& command, ScaleOptions& options) {
  command.add_option("--workload", options.workload, "A workload file (docs/workload-format.md)")
      ->required();
  command.add_option("--devices", options.devices, "Device counts, e.g. 8,16,32,64")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  add_machine_flags(command, options.machine, /*with_devices=*/false);
  command.add_option("--out", options.out_folder, "Folder for the table and the plot")
      ->capture_default_str();
  command.add_flag("!--no-plot", options.plot, "Write the table only, no PNG");
  add_placement_flag(command, options.placement);
}

int run_scale_command(const ScaleOptions& options, std::ostream& out) {
  const Workload workload = load_workload_file(options.workload);
  placement_from_flag(options.placement);  // text it cannot read is an error before any output
  std::string table =
      "# devices  step_time_ms  communication_%  allreduce_busbw_GBps  memory_per_device_GiB  "
      "exposed_communication_ms  overlap_ms\n";
  out << "spmdsim scale: " << workload.name << " on "
      << (options.machine.machine.empty()
              ? fmt::format("{}, links {}", options.machine.topology, options.machine.link)
              : options.machine.machine)
      << "\n devices  step time (ms)  communication %  allreduce busbw (GB/s)  memory (GiB)  "
         "exposed (ms)  overlap (ms)\n";
  Progress progress("scale", static_cast<int>(options.devices.size()));
  AlgorithmNotes notes;
  for (std::size_t i = 0; i < options.devices.size(); ++i) {
    const std::string row = table_row(measure(options, workload, options.devices[i], notes));
    out << row << '\n';
    table += row + '\n';
    progress.done(static_cast<int>(i + 1));
  }
  const std::string data = write_table(options, table);
  out << "table: " << data << '\n';
  if (options.plot) {
    const std::string title = fmt::format("spmdsim scale: {}", workload.name);
    out << "plot: " << plot(options, data, title) << '\n';
  }
  out.flush();
  notes.print(std::cerr);
  return 0;
}

}  // namespace spmd
