#include "cli/scale_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <vector>

#include "cli/algorithm_notes.h"
#include "cli/gnuplot.h"
#include "cli/placement_flag.h"
#include "cli/progress.h"
#include "cli/run_memory.h"
#include "reference/error.h"
#include "reference/input_file.h"
#include "sim/machine.h"
#include "support/output_file.h"
#include "traces/run_report.h"
#include "workloads/step_work.h"
#include "workloads/symmetric_step.h"
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
  double throughput_per_s = 0;       // StepWork units (tokens, samples, steps) per second
  double ideal_throughput_per_s = 0;   // the first point's per-device throughput times devices
  double scaling_efficiency_percent = 0;  // throughput against the ideal
  // busbw of the largest collective on each mesh axis ("data", "model", "x+y"), by axis name.
  std::map<std::string, double> busbw_by_axis_gbps;
};

bool is_all_reduce(const std::string& op) {
  return op == "psum" || op == "pmean" || op == "pmax" || op == "pmin";
}

// "'data'" -> "data", "('x', 'y')" -> "x+y": a name that fits a column header.
std::string axis_column_name(const std::string& axes) {
  std::string name;
  for (char c : axes) {
    if (c == ',') name += '+';
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') name += c;
  }
  return name.empty() ? "none" : name;
}

std::map<std::string, double> busbw_by_axis(const sim::CostLog& log) {
  std::map<std::string, std::int64_t> largest_bytes;
  std::map<std::string, double> busbw;
  for (const sim::CollectiveRecord& r : log.collectives) {
    const std::string axis = axis_column_name(r.axes);
    auto [it, added] = largest_bytes.emplace(axis, r.bytes);
    if (added || r.bytes > it->second) {
      it->second = r.bytes;
      busbw[axis] = r.busbw_bytes_per_s / 1e9;
    }
  }
  return busbw;
}

struct Measured {
  ScalePoint point;
  std::int64_t capacity_bytes = 0;
  std::string note;  // a transformer's: how its step ran (workloads/symmetric_step.h)
};

Measured measure(const ScaleOptions& options, const Workload& workload, int devices,
                 AlgorithmNotes& notes) {
  const sim::MachineSpec spec = machine_with_devices(options.machine, devices);
  const sim::SimOptions sim_options = simulation_options(
      options.machine, {.cost_only = true, .placement = placement_from_flag(options.placement)});
  sim::Machine machine(spec, sim_options);
  const WorkloadRun run =
      run_workload_symmetric(machine, workload, !options.machine.full_simulation);
  const sim::CostLog& log = run.log;
  notes.add(log);
  const traces::RunTotals totals = traces::run_totals(log);
  const double steps = workload.steps;
  ScalePoint point{.devices = devices,
                   .step_ms = static_cast<double>(totals.total_ps) / 1e9 / steps,
                   .communication_percent = 100 * totals.communication_share,
                   .memory_gib = static_cast<double>(totals.peak_memory_bytes) / (1 << 30),
                   .exposed_ms = static_cast<double>(totals.exposed_communication_ps) / 1e9 / steps,
                   .overlap_ms =
                       static_cast<double>(totals.overlapped_communication_ps) / 1e9 / steps,
                   .busbw_by_axis_gbps = busbw_by_axis(log)};
  if (point.step_ms > 0) {
    point.throughput_per_s = work_per_step(workload, devices).count / (point.step_ms / 1e3);
  }
  std::int64_t largest = -1;
  for (const sim::CollectiveRecord& r : log.collectives) {
    if (is_all_reduce(r.op) && r.bytes > largest) {
      largest = r.bytes;
      point.all_reduce_busbw_gbps = r.busbw_bytes_per_s / 1e9;
    }
  }
  return {point, spec.memory_bytes, run.note};
}

// Ideal scaling from the first (smallest) point: its throughput per device, times devices.
void add_scaling_efficiency(std::vector<ScalePoint>& points) {
  if (points.empty() || points.front().throughput_per_s <= 0) return;
  const ScalePoint& base = points.front();
  const double per_device = base.throughput_per_s / base.devices;
  for (ScalePoint& p : points) {
    p.ideal_throughput_per_s = per_device * p.devices;
    p.scaling_efficiency_percent = 100 * p.throughput_per_s / p.ideal_throughput_per_s;
  }
}

// Every axis any point has, by name: the table's busbw columns.
std::vector<std::string> axis_columns(const std::vector<ScalePoint>& points) {
  std::set<std::string> axes;
  for (const ScalePoint& p : points) {
    for (const auto& entry : p.busbw_by_axis_gbps) axes.insert(entry.first);
  }
  return {axes.begin(), axes.end()};
}

std::string table_header(const std::string& unit, const std::vector<std::string>& axes) {
  std::string header = fmt::format(
      "# devices  step_time_ms  communication_%  allreduce_busbw_GBps  memory_per_device_GiB  "
      "exposed_communication_ms  overlap_ms  {0}_per_s  ideal_{0}_per_s  scaling_efficiency_%",
      unit);
  for (const std::string& axis : axes) header += fmt::format("  busbw_{}_GBps", axis);
  return header + '\n';
}

std::string table_row(const ScalePoint& p, const std::vector<std::string>& axes) {
  std::string row = fmt::format(
      "{:8}  {:14.4f}  {:14.1f}  {:16.2f}  {:16.4f}  {:14.4f}  {:14.4f}  {:14.6g}  {:14.6g}  "
      "{:10.1f}",
      p.devices, p.step_ms, p.communication_percent, p.all_reduce_busbw_gbps, p.memory_gib,
      p.exposed_ms, p.overlap_ms, p.throughput_per_s, p.ideal_throughput_per_s,
      p.scaling_efficiency_percent);
  for (const std::string& axis : axes) {
    const auto it = p.busbw_by_axis_gbps.find(axis);
    // gnuplot skips "NaN": an axis without collectives at this device count draws no point.
    row += it == p.busbw_by_axis_gbps.end() ? "  NaN" : fmt::format("  {:12.2f}", it->second);
  }
  return row;
}

std::string quoted_for_gnuplot(const std::string& text) {
  std::string quoted;
  for (char c : text) quoted += c == '"' ? '\'' : c;
  return quoted;
}

// Six panels against the device count (log scale): step time, throughput with the ideal line,
// scaling efficiency, exposed and overlapped communication, busbw per mesh axis, memory per
// device against the capacity.
std::string gnuplot_script(const std::string& data_path, const std::string& png_path,
                           const std::string& title, const std::string& unit,
                           const std::vector<std::string>& axes, double capacity_gib) {
  constexpr int kFirstAxisColumn = 11;
  std::string busbw_plot;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    busbw_plot += fmt::format("{}'{}' using 1:{} with linespoints pt 7 title \"{}\"",
                              i == 0 ? "plot " : ", ", data_path, kFirstAxisColumn + i, axes[i]);
  }
  if (busbw_plot.empty()) busbw_plot = "plot 0 notitle";
  return fmt::format(
      "set terminal pngcairo size 1400,1300 font 'sans,10'\n"
      "set output '{png}'\n"
      "set multiplot layout 3,2 title \"{title}\"\n"
      "set logscale x 2\nset xlabel 'devices'\nset grid\nset key top left\nset yrange [0:*]\n"
      "set title 'step time (ms)'\nplot '{data}' using 1:2 with linespoints pt 7 notitle\n"
      "set title 'throughput ({unit}/s)'\n"
      "plot '{data}' using 1:8 with linespoints pt 7 title 'simulated', "
      "'{data}' using 1:9 with lines dt 2 title 'ideal (linear from the first point)'\n"
      "set title 'scaling efficiency (%)'\nset yrange [0:110]\n"
      "plot '{data}' using 1:10 with linespoints pt 7 notitle, 100 with lines dt 2 notitle\n"
      "set yrange [0:*]\n"
      "set title 'communication per step (ms)'\n"
      "plot '{data}' using 1:6 with linespoints pt 7 title 'exposed', "
      "'{data}' using 1:7 with linespoints pt 6 title 'overlapped with compute'\n"
      "set title 'busbw of the largest collective per mesh axis (GB/s)'\n{busbw}\n"
      "set title 'memory per device (GiB)'\n"
      "plot '{data}' using 1:5 with linespoints pt 7 title 'peak', {capacity} with lines dt 2 "
      "title 'capacity'\n"
      "unset multiplot\n",
      fmt::arg("png", png_path), fmt::arg("title", quoted_for_gnuplot(title)),
      fmt::arg("data", data_path), fmt::arg("unit", unit), fmt::arg("busbw", busbw_plot),
      fmt::arg("capacity", capacity_gib));
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

struct PlotLabels {
  std::string title;
  std::string unit;
  std::vector<std::string> axes;
  double capacity_gib = 0;
};

std::string plot(const ScaleOptions& options, const std::string& data, const PlotLabels& labels) {
  const std::filesystem::path dir(options.out_folder);
  const std::string png = (dir / "scale.png").string();
  write_output_file(dir / "scale.gp", gnuplot_script(data, png, labels.title, labels.unit,
                                                     labels.axes, labels.capacity_gib));
  run_gnuplot(dir / "scale.gp", "--no-plot skips the plot");
  return png;
}

std::string machine_label(const MachineFlags& machine) {
  return machine.machine.empty() ? fmt::format("{}, links {}", machine.topology, machine.link)
                                 : machine.machine;
}

// A device count given twice would run the same point again and print it twice: the flag's
// error (issue 42), naming the count and where it repeats.
void check_distinct_device_counts(const std::vector<int>& devices) {
  for (std::size_t i = 0; i < devices.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (devices[j] != devices[i]) continue;
      throw Error(fmt::format(
          "--devices {}: {} is given twice (entries {} and {}), expected distinct device counts",
          fmt::join(devices, ","), devices[i], j + 1, i + 1));
    }
  }
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
  check_distinct_device_counts(options.devices);
  // Every point's machine from the estimate, before the first runs (cli/run_memory.h).
  for (const int devices : options.devices) {
    check_run_fits_host(
        simulated_run_memory(machine_with_devices(options.machine, devices), 0),
        fmt::format("--devices {}", fmt::join(options.devices, ",")));
  }
  const Workload workload = load_workload_file(options.workload);
  placement_from_flag(options.placement);  // text it cannot read is an error before any output
  Progress progress("scale", static_cast<int>(options.devices.size()));
  AlgorithmNotes notes;
  std::vector<ScalePoint> points;
  double capacity_gib = 0;
  std::string step_notes;
  for (std::size_t i = 0; i < options.devices.size(); ++i) {
    const Measured measured = measure(options, workload, options.devices[i], notes);
    points.push_back(measured.point);
    if (!measured.note.empty()) {
      step_notes += fmt::format("{} devices: {}\n", options.devices[i], measured.note);
    }
    capacity_gib = std::max(capacity_gib, static_cast<double>(measured.capacity_bytes) / (1 << 30));
    progress.done(static_cast<int>(i + 1));
  }
  add_scaling_efficiency(points);
  const std::string unit = work_per_step(workload, 1).unit;
  const std::vector<std::string> axes = axis_columns(points);
  std::string table = table_header(unit, axes);
  for (const ScalePoint& p : points) table += table_row(p, axes) + '\n';
  out << "spmdsim scale: " << workload.name << " on " << machine_label(options.machine) << "\n"
      << table << step_notes;
  const std::string data = write_table(options, table);
  out << "table: " << data << '\n';
  if (options.plot) {
    const std::string title = fmt::format("spmdsim scale: {} on {}", workload.name,
                                          machine_label(options.machine));
    out << "plot: " << plot(options, data, {title, unit, axes, capacity_gib}) << '\n';
  }
  out.flush();
  notes.print(std::cerr);
  return 0;
}

}  // namespace spmd
