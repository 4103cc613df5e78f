#include "cli/calibrate_command.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "cli/machine_flags.h"
#include "cli/perf_command.h"
#include "cost_model/collective_timing.h"
#include "reference/error.h"
#include "sim/machine_spec.h"
#include "support/output_file.h"
#include "support/units.h"
#include "validation/calibration_output.h"
#include "validation/error_summary.h"
#include "validation/nccl_tests_log.h"
#include "validation/timing_fit.h"

namespace spmd {
namespace {

using cost_model::DocumentedTiming;
using cost_model::MeasuredTiming;

CalibrationOutput read_output(const std::string& path, const CalibrateOptions& options) {
  const NcclTestsLog log = read_nccl_tests_log(path);
  const std::string op_name = op_of_output(log, path, options.op);
  const cost_model::TimedOp op = timed_op_of_perf_op(op_name);
  const std::string& machine = options.machine;
  if (!log.ranks) {
    throw Error(fmt::format(
        "{}: no \"#  Rank\" lines; expected the output as nccl-tests prints it, which says on "
        "how many ranks it ran",
        path));
  }
  sim::MachineSpec spec;
  try {
    spec = machine_with_devices(MachineFlags{.machine = machine}, *log.ranks);
  } catch (const Error& e) {
    throw Error(fmt::format("{} ({} ranks): {}", path, *log.ranks, e.what()));
  }
  if (!spec.fabric) {
    throw Error(
        fmt::format("--machine {}: no fabric; expected a GPU preset or a machine file "
                    "with one (docs/machine-format.md), whose timing calibrate fits",
                    machine));
  }
  sim::MachineSpec launched;
  try {
    launched = with_launch_flags(spec, log.gpus_per_process, log.graph_launch.value_or(false));
  } catch (const Error& e) {
    throw Error(fmt::format("{} (nGpus {}): {}", path, log.gpus_per_process.value_or(1), e.what()));
  }
  return calibration_output(path, log, op_name, op, std::move(spec), *launched.fabric);
}

// The fields to fit: those --fit names, else every one the outputs tell apart.
std::vector<const FitField*> fields_to_fit(const std::vector<std::string>& names,
                                           OutputScales scales) {
  for (const std::string& name : names) {
    const auto named = [&](const FitField& f) { return f.name == name; };
    if (std::ranges::none_of(fittable_fields(), named)) {
      throw Error(fmt::format("--fit {}: expected some of {}", name, fittable_field_names()));
    }
  }
  std::vector<const FitField*> fields;
  for (const FitField& field : fittable_fields()) {
    const bool named = std::ranges::find(names, field.name) != names.end();
    if (named && needs_nodes(field) && !scales.across_nodes) {
      throw Error(
          fmt::format("--fit {}: no output spans several nodes; expected an output "
                      "measured across nodes, which its value sets",
                      field.name));
    }
    if (named || (names.empty() && informs(field, scales))) fields.push_back(&field);
  }
  return fields;
}

std::string value_text(const FitField& field, std::optional<double> value) {
  if (!value) return "-";
  if (field.latency) return format_duration_ps(fitted_latency_ps(*value));
  return fmt::format("{:.3f}", *value);
}

void print_fields(const std::vector<const FitField*>& fitted, const DocumentedTiming& documented,
                  const MeasuredTiming& measured, std::ostream& out) {
  out << fmt::format("# {:<22}{:>14}{:>14}\n", "field", "documented", "fitted");
  for (const FitField& field : fittable_fields()) {
    const bool was_fitted = std::ranges::find(fitted, &field) != fitted.end();
    const std::optional<double> value = field.get(measured);
    out << fmt::format(
        "  {:<22}{:>14}{:>14}{}\n", field.name, value_text(field, field.documented(documented)),
        value ? value_text(field, value) : "documented", was_fitted ? "" : "  (not fitted)");
  }
}

void print_errors(const std::vector<CalibrationOutput>& outputs, const MeasuredTiming& start,
                  const MeasuredTiming& fitted, std::ostream& out) {
  out << fmt::format("# {:<40}{:>6}{:>18}{:>18}\n", "output", "sizes", "median |error|",
                     "p90 |error|");
  out << fmt::format("# {:<40}{:>6}{:>9}{:>9}{:>9}{:>9}\n", "", "", "before", "after", "before",
                     "after");
  for (const CalibrationOutput& output : outputs) {
    const ErrorSummary before = output_error_summary(output, start);
    const ErrorSummary after = output_error_summary(output, fitted);
    out << fmt::format("  {:<40}{:>6}{:>9}{:>9}{:>9}{:>9}\n", output.path, before.rows,
                       percent_text(before.median_abs_error), percent_text(after.median_abs_error),
                       percent_text(before.p90_abs_error), percent_text(after.p90_abs_error));
  }
}

}  // namespace

void add_calibrate_flags(CLI::App& command, CalibrateOptions& options) {
  command
      .add_option("--machine", options.machine,
                  fmt::format("The machine the outputs were measured on: a GPU preset ({}) or a "
                              "machine file with a fabric (docs/machine-format.md)",
                              preset_names()))
      ->required();
  command
      .add_option("outputs", options.outputs,
                  "nccl-tests or rccl-tests outputs measured on it (all_reduce_perf, ...), each "
                  "on its own ranks")
      ->required();
  command.add_option("--op", options.op,
                     "all_reduce, all_gather, reduce_scatter, all_to_all, ppermute or broadcast: "
                     "what the outputs that name no test measured");
  command
      .add_option("--fit", options.fit,
                  fmt::format("The fields to fit, some of {} (default: every one the outputs "
                              "inform; the network's need an output across nodes)",
                              fittable_field_names()))
      ->delimiter(',');
  command.add_option("-o,--output", options.output_file,
                     "Write the machine with the fitted values here, a machine file for "
                     "--machine of perf, run and scale");
}

int run_calibrate_command(const CalibrateOptions& options, std::ostream& out) {
  std::vector<CalibrationOutput> outputs;
  for (const std::string& path : options.outputs) {
    outputs.push_back(read_output(path, options));
  }
  const std::vector<const FitField*> fields = fields_to_fit(options.fit, output_scales(outputs));
  const sim::MachineSpec& first = outputs.front().machine;
  const MeasuredTiming start = first.fabric->measured;
  const Fit fit = fit_fields(fields, outputs, start);

  out << fmt::format("# spmdsim calibrate: {} beside {} output{}\n", options.machine,
                     outputs.size(), outputs.size() == 1 ? "" : "s");
  for (const CalibrationOutput& output : outputs) {
    out << fmt::format("#   {}: {} on {} ranks, {} node{}, {} sizes\n", output.path, output.op,
                       output.ranks, output.nodes, output.nodes == 1 ? "" : "s",
                       output.requests.size());
  }
  out << "#\n";
  print_fields(fields, cost_model::documented_timing(*first.fabric), fit.measured, out);
  out << "#\n";
  print_errors(outputs, start, fit.measured, out);
  if (!options.output_file.empty()) {
    sim::MachineSpec calibrated = first;
    calibrated.fabric->measured = fit.measured;
    calibrated.name = fmt::format("{}, calibrated", first.name);
    write_output_file(options.output_file, sim::machine_to_json(calibrated).dump(2) + "\n");
    out << fmt::format(
        "# wrote {}: spmdsim perf --machine {} -n N predicts other sizes and scales with it\n",
        options.output_file, options.output_file);
  }
  return 0;
}

}  // namespace spmd
