#include "cli/validate_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <vector>

#include "cli/error_limit_flags.h"
#include "cli/gnuplot.h"
#include "cli/validate_training.h"
#include "cost_model/collective_timing.h"
#include "reference/error.h"
#include "reference/input_file.h"
#include "support/csv_table.h"
#include "support/output_file.h"
#include "training/published_run.h"
#include "validation/calibration_row.h"
#include "validation/collective_prediction.h"
#include "validation/collective_range.h"
#include "validation/error_band.h"
#include "validation/error_summary.h"

namespace spmd {
namespace {

std::string_view scale_name(bool across_nodes) {
  return across_nodes ? "several nodes" : "one node";
}

// "-", "ring", "LL" or "nvls/Simple".
std::string forced_text(const CalibrationRow& row) {
  std::string text;
  if (row.forced_algorithm) text = cost_model::library_algorithm_name(*row.forced_algorithm);
  if (row.forced_protocol) {
    text +=
        (text.empty() ? "" : "/") + std::string(cost_model::protocol_name(*row.forced_protocol));
  }
  return text.empty() ? "-" : text;
}

// The forced choice and how the run launched, as nccl-tests' flags: "-", "ring", "- -g 8",
// "ring -G 1".
std::string settings_text(const CalibrationRow& row) {
  std::string text = forced_text(row);
  if (row.launch.gpus_per_process > 1) text += fmt::format(" -g {}", row.launch.gpus_per_process);
  if (row.launch.graph_launch) text += " -G 1";
  return text;
}

std::string machine_text(const MachineRows& machine) {
  return fmt::format("{}: {}, {} node{} x {} GPUs ({})", machine.config_id, machine.machine.gpu,
                     machine.machine.nodes, machine.machine.nodes == 1 ? "" : "s",
                     machine.machine.gpus_per_node,
                     machine.not_predicted.empty() ? "preset " + machine.preset
                                                   : "not predicted: " + machine.not_predicted);
}

// "1 row", "2 rows".
std::string rows_text(int rows) { return fmt::format("{} row{}", rows, rows == 1 ? "" : "s"); }

std::string summary_text(const ErrorSummary& summary, int skipped) {
  return fmt::format(
      "{} compared: median |error| {}, p90 |error| {}, within 10%: {}; {} skipped (no time_us, "
      "algbw_GBps or busbw_GBps)",
      rows_text(summary.rows), percent_text(summary.median_abs_error),
      percent_text(summary.p90_abs_error), percent_text(summary.share_within_10_percent), skipped);
}

// The range a row's prediction carries (validation/collective_range.h).
ValueRange range_of(const MachineRows& machine, const CollectivePrediction& p) {
  return collective_time_range(machine.fabric, machine.machine.nodes > 1, p.predicted_us);
}

// "N of M rows inside their range", over the rows with a measurement.
std::string inside_range_text(const std::vector<MachineRows>& machines) {
  int compared = 0, inside = 0;
  for (const MachineRows& machine : machines) {
    for (const CollectivePrediction& p : machine.predictions) {
      if (!p.error) continue;
      ++compared;
      if (range_of(machine, p).contains(*p.row->measured_time_us)) ++inside;
    }
  }
  return fmt::format("{} of {} inside their range", inside, rows_text(compared));
}

void print_machine(const MachineRows& machine, std::ostream& out) {
  out << machine_text(machine) << "\n"
      << fmt::format("  {:>6}  {:<16}  {:>12}  {:<12}  {:>14}  {:>14}  {:>21}  {:<14}  {:>8}\n",
                     "line", "op", "size (B)", "forced", "measured (us)", "predicted (us)",
                     "range (us)", "chosen", "error");
  std::map<std::string, int> fallbacks;  // note -> rows; sorted, so printed in a fixed order
  for (const CollectivePrediction& p : machine.predictions) {
    if (!p.error) continue;
    const bool fell_back = !p.choice.fallback.empty();
    if (fell_back) ++fallbacks[p.choice.fallback];
    const ValueRange range = range_of(machine, p);
    out << fmt::format(
        "  {:>6}  {:<16}  {:>12}  {:<12}  {:>14.2f}  {:>14.2f}  {:>21}  {:<14}  {:>+7.1f}%\n",
        p.row->line, p.row->op_name, p.row->size_bytes, settings_text(*p.row),
        *p.row->measured_time_us, p.predicted_us,
        fmt::format("{:.2f}-{:.2f}", range.low, range.high),
        p.choice.label() + (fell_back ? "*" : ""), 100 * *p.error);
  }
  for (const auto& [note, rows] : fallbacks) {
    out << fmt::format("  * {}: {}\n", rows_text(rows), note);
  }
  out << "  " << summary_text(summarize_errors(errors_of(machine)), skipped_rows(machine))
      << "\n\n";
}

// Where one source entry was published, short: `owner/name` for a GitHub repository, whether
// written `github:owner/name@commit:path` or as a github.com address; any other text as it is.
// The table names the repositories; the file itself holds each row's full source.
std::string source_repository(std::string_view entry) {
  for (std::string_view prefix : {"github:", "https://github.com/"}) {
    if (!entry.starts_with(prefix)) continue;
    const std::string_view rest = entry.substr(prefix.size());
    const std::size_t owner_end = rest.find('/');
    if (owner_end == std::string_view::npos) break;
    const std::size_t name_end = rest.find_first_of("@/:#", owner_end + 1);
    return std::string(rest.substr(0, name_end));
  }
  return std::string(entry);
}

// The repositories the machine's rows come from, each once, in the order they first appear.
std::string sources_of(const MachineRows& machine) {
  std::vector<std::string> sources;
  for (const CollectivePrediction& p : machine.predictions) {
    const std::string repository = source_repository(p.row->source);
    if (!repository.empty() &&
        std::find(sources.begin(), sources.end(), repository) == sources.end()) {
      sources.push_back(repository);
    }
  }
  return fmt::format("{}", fmt::join(sources, ", "));
}

void print_summary_table(const std::vector<MachineRows>& machines, const ErrorSummary& overall,
                         int skipped, std::ostream& out) {
  out << "| machine | preset | nodes x GPUs | rows | median \\|error\\| | p90 \\|error\\| | within "
         "10% | source |\n|---|---|---|---:|---:|---:|---:|---|\n";
  const auto row = [&out](std::string_view name, std::string_view preset, std::string_view shape,
                          const ErrorSummary& s, std::string_view source) {
    out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", name, preset, shape, s.rows,
                       percent_text(s.median_abs_error), percent_text(s.p90_abs_error),
                       percent_text(s.share_within_10_percent), source);
  };
  for (const MachineRows& machine : machines) {
    // The preset the model built, not the file's GPU text: the table keeps no field of the file.
    row(machine.config_id, machine.not_predicted.empty() ? machine.preset : "-",
        fmt::format("{} x {}", machine.machine.nodes, machine.machine.gpus_per_node),
        summarize_errors(errors_of(machine)), sources_of(machine));
  }
  row("all", "", "", overall, "");
  out << fmt::format("\n{} without time_us, algbw_GBps or busbw_GBps skipped.\n",
                     rows_text(skipped));
}

void print_op_and_scale_table(const std::vector<MachineRows>& machines, std::ostream& out) {
  out << "\n| op | GPUs on | rows | median \\|error\\| | p90 \\|error\\| | within 10% |\n"
         "|---|---|---:|---:|---:|---:|\n";
  for (const auto& [group, errors] : errors_by_op_and_scale(machines)) {
    const ErrorSummary s = summarize_errors(errors);
    out << fmt::format("| {} | {} | {} | {} | {} | {} |\n", cost_model::timed_op_name(group.op),
                       scale_name(group.across_nodes), s.rows, percent_text(s.median_abs_error),
                       percent_text(s.p90_abs_error), percent_text(s.share_within_10_percent));
  }
}

void print_op_and_scale_lines(const std::vector<MachineRows>& machines, std::ostream& out) {
  out << "by op and scale:\n";
  for (const auto& [group, errors] : errors_by_op_and_scale(machines)) {
    const ErrorSummary s = summarize_errors(errors);
    out << fmt::format("  {}, {}: {} compared: median |error| {}, p90 |error| {}, within 10%: {}\n",
                       cost_model::timed_op_name(group.op), scale_name(group.across_nodes),
                       rows_text(s.rows), percent_text(s.median_abs_error),
                       percent_text(s.p90_abs_error), percent_text(s.share_within_10_percent));
  }
}

// ---- Plots

// A series of a machine's plot: one op with one forced choice, in place or not.
std::string series_label(const CalibrationRow& row) {
  std::string label = row.op_name;
  if (row.forced_algorithm || row.forced_protocol) label += " " + forced_text(row) + " forced";
  if (row.in_place) label += " in-place";
  return label;
}

// A file name from a config_id: letters, digits, '.', '-' and '_' kept, others '_'.
std::string file_stem(std::string_view config_id) {
  std::string stem;
  for (char c : config_id) {
    const bool kept =
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
    stem += kept ? c : '_';
  }
  return stem;
}

struct PlotSeries {
  std::string label;
  std::vector<const CollectivePrediction*> points;
};

std::vector<PlotSeries> plot_series(const MachineRows& machine) {
  std::vector<PlotSeries> series;
  std::map<std::string, std::size_t> index_of_label;
  for (const CollectivePrediction& p : machine.predictions) {
    if (!p.error) continue;
    const std::string label = series_label(*p.row);
    const auto [found, added] = index_of_label.try_emplace(label, series.size());
    if (added) series.push_back({label, {}});
    series[found->second].points.push_back(&p);
  }
  for (PlotSeries& s : series) {
    std::stable_sort(s.points.begin(), s.points.end(),
                     [](const CollectivePrediction* a, const CollectivePrediction* b) {
                       return a->row->size_bytes < b->row->size_bytes;
                     });
  }
  return series;
}

// gnuplot's data blocks, one per series (selected with `index`), two blank lines apart.
std::string plot_data(const std::vector<PlotSeries>& series) {
  std::string data;
  for (std::size_t i = 0; i < series.size(); ++i) {
    data += fmt::format("{}# series {}: {}\n# size_bytes measured_us predicted_us\n",
                        i == 0 ? "" : "\n\n", i, series[i].label);
    for (const CollectivePrediction* p : series[i].points) {
      data +=
          fmt::format("{} {} {}\n", p->row->size_bytes, *p->row->measured_time_us, p->predicted_us);
    }
  }
  return data;
}

std::string plot_script(const MachineRows& machine, const std::vector<PlotSeries>& series,
                        const std::string& data_path, const std::string& png_path) {
  std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 1100,750 font 'sans,10'\n"
      "set output {}\nset title {}\n"
      "set logscale x 2\nset xtics 1024\nset format x '%.0b%BB'\nset logscale y 10\n"
      "set xlabel 'size (bytes)'\nset ylabel 'time (us)'\nset grid\n"
      "set key outside right top title 'dots: measured, crosses and lines: predicted'\n",
      gnuplot_quoted(png_path), gnuplot_quoted(machine_text(machine)));
  // gnuplot cycles through 8 colours; each further 8 series take the next point and dash type.
  constexpr std::array<int, 4> kPointTypes = {7, 5, 9, 11};
  std::vector<std::string> plots;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const std::string data = gnuplot_quoted(data_path);
    const std::size_t round = i / 8;
    plots.push_back(fmt::format("{} index {} using 1:2 with points pt {} lc {} title {}", data, i,
                                kPointTypes[round % kPointTypes.size()], i % 8 + 1,
                                gnuplot_quoted(series[i].label + " measured")));
    plots.push_back(
        fmt::format("{} index {} using 1:3 with linespoints pt 2 lw 2 dt {} lc {} title {}", data,
                    i, round + 1, i % 8 + 1, gnuplot_quoted(series[i].label + " predicted")));
  }
  std::string joined;
  for (const std::string& plot : plots) joined += (joined.empty() ? "" : ", \\\n     ") + plot;
  return script + "plot " + joined + "\n";
}

// Per machine DIR/STEM.dat and DIR/STEM.gp, and DIR/STEM.png when gnuplot is on PATH.
void write_plots(const std::vector<MachineRows>& machines, const std::string& plot_dir, bool quiet,
                 std::ostream& out, std::ostream& err) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::create_directories(plot_dir, error);
  if (error) {
    throw Error(fmt::format("--plot-dir {}: cannot create the folder ({})",
                            path_for_message(plot_dir), error.message()));
  }
  const bool draw = gnuplot_on_path();
  std::set<std::string> stems;
  for (const MachineRows& machine : machines) {
    const std::vector<PlotSeries> series = plot_series(machine);
    if (series.empty()) continue;  // no row with a measurement
    const std::string stem = file_stem(machine.config_id);
    if (!stems.insert(stem).second) {
      throw Error(
          fmt::format("config_id {}: its plot file name {} is another config_id's too; "
                      "expected config_ids that differ in letters, digits, '.', '-' or '_'",
                      machine.config_id, stem));
    }
    const fs::path data = fs::path(plot_dir) / (stem + ".dat");
    const fs::path script = fs::path(plot_dir) / (stem + ".gp");
    const fs::path png = fs::path(plot_dir) / (stem + ".png");
    write_output_file(data, plot_data(series));
    write_output_file(script, plot_script(machine, series, data.string(), png.string()));
    if (draw) run_gnuplot(script, "leave out --plot-dir for no plots");
    if (!quiet) out << "plot: " << (draw ? png : script).string() << "\n";
  }
  if (!draw) {
    err << "validate: gnuplot is not on PATH (Debian gnuplot-nox): wrote the data and gnuplot "
           "scripts to "
        << plot_dir << " but no PNGs\n";
  }
}

}  // namespace

void add_validate_flags(CLI::App& command, ValidateOptions& options) {
  command.add_option("file", options.file, "A calibration CSV or a file of published training runs (columns as in "
                     "docs/validation.md; told apart by the header)")
      ->required();
  command.add_flag(
      "--summary", options.summary,
      "Print only the tables of median and p90 |error| per machine and by op and scale "
      "(markdown)");
  command.add_option("--plot-dir", options.plot_dir,
                     "Write per machine a data file, a gnuplot script and a PNG of measured and "
                     "predicted time against size here");
  add_error_limit_flags(command, options.limits, "all rows");
}

int run_validate_command(const ValidateOptions& options, std::ostream& out, std::ostream& err) {
  const CsvTable table = CsvTable::read_file(options.file);
  if (training::is_published_steps_table(table)) {
    return run_training_validate(table, options, out, err);
  }
  const std::vector<CalibrationRow> rows = read_calibration_rows(table);
  // Every row is read and predicted before anything is printed: bad input is one error.
  const std::vector<MachineRows> machines = predictions_by_machine(table, rows);
  const ErrorSummary overall = summarize_errors(errors_of(machines));
  const int skipped = skipped_rows(machines);
  if (options.summary) {
    print_summary_table(machines, overall, skipped, out);
    print_op_and_scale_table(machines, out);
    out << "\n" << error_band_table(error_bands(family_errors(machines))) << "\n"
        << inside_range_text(machines) << "\n";
  } else {
    out << fmt::format("spmdsim validate: {}: {}, {} machine{}\n\n", table.file_name(),
                       rows_text(static_cast<int>(rows.size())), machines.size(),
                       machines.size() == 1 ? "" : "s");
    for (const MachineRows& machine : machines) print_machine(machine, out);
    out << "all machines: " << summary_text(overall, skipped) << "; "
        << inside_range_text(machines) << "\n";
    print_op_and_scale_lines(machines, out);
  }
  for (const auto& [reason, count] : not_predicted_reasons(machines)) {
    out << fmt::format("{} not predicted ({})\n", rows_text(count), reason);
  }
  if (!options.plot_dir.empty()) write_plots(machines, options.plot_dir, options.summary, out, err);
  out.flush();
  return exit_code_for_limits(options.limits, overall, "row", "validate", err);
}

}  // namespace spmd
