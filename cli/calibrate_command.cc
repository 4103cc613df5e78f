#include "cli/calibrate_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>
#include <utility>

#include "cli/machine_flags.h"
#include "cli/perf_command.h"
#include "cost_model/collective_timing.h"
#include "reference/error.h"
#include "sim/machine_spec.h"
#include "support/output_file.h"
#include "support/units.h"
#include "validation/error_summary.h"
#include "validation/nccl_tests_log.h"
#include "validation/nccl_type_names.h"

namespace spmd {
namespace {

using cost_model::DocumentedTiming;
using cost_model::Fabric;
using cost_model::MeasuredTiming;

// One output, read for the closed-form timing: each measured size as a request on the
// machine's fabric with the output's launch (-g, -G).
struct CalibrationOutput {
  std::string path;
  std::string op;  // perf's name: "all_reduce"
  int ranks = 0;
  int nodes = 0;
  sim::MachineSpec machine;  // --machine on the output's ranks, as given
  Fabric fabric;             // its fabric with the output's launch
  std::vector<cost_model::TimingRequest> requests;
  std::vector<double> measured_us;
};

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
  CalibrationOutput output{.path = path,
                           .op = op_name,
                           .ranks = *log.ranks,
                           .nodes = cost_model::nodes_of(*spec.fabric, *log.ranks),
                           .machine = std::move(spec),
                           .fabric = *launched.fabric};
  for (const NcclTestsResult& result : log.results) {
    output.requests.push_back({.op = op,
                               .bytes = result.size_bytes,
                               .ranks = *log.ranks,
                               .element_bytes = nccl_type_bytes(result.type).value_or(4)});
    output.measured_us.push_back(result.time_us);
  }
  return output;
}

// Each size of the output predicted with `measured`, in the output's order.
std::vector<double> predicted_us(const CalibrationOutput& output, const MeasuredTiming& measured) {
  Fabric fabric = output.fabric;
  fabric.measured = measured;
  std::vector<double> times_us;
  for (const cost_model::TimingRequest& request : output.requests) {
    times_us.push_back(static_cast<double>(cost_model::time_collective(fabric, request).time_ps) /
                       1e6);
  }
  return times_us;
}

// What the fit minimizes: the mean over every size of every output of |ln(predicted /
// measured)|, which weighs a prediction twice too slow as one twice too fast.
double mean_log_error(const std::vector<CalibrationOutput>& outputs,
                      const MeasuredTiming& measured) {
  double sum = 0;
  std::size_t rows = 0;
  for (const CalibrationOutput& output : outputs) {
    const std::vector<double> times_us = predicted_us(output, measured);
    for (std::size_t row = 0; row < times_us.size(); ++row) {
      sum += std::abs(std::log(std::max(times_us[row], 1e-6) / output.measured_us[row]));
      ++rows;
    }
  }
  return sum / static_cast<double>(rows);
}

// Which outputs tell a field apart from the others. The launch latency sets every floor; the
// scale-up links' share, a one-node output's large sizes; the NICs' share, large sizes across
// nodes. A network hop's latency shows only across nodes, where it raises the same floor as the
// launch: only a one-node output beside it, which fixes the launch, separates the two.
enum class InformedBy { any_output, one_node, across_nodes, one_node_and_across_nodes };

struct OutputScales {
  bool one_node = false;
  bool across_nodes = false;
};

// A field of MeasuredTiming the fit can set: latencies in microseconds, searched on a log scale
// and kept to 10 ns; efficiencies as shares, kept to 0.001.
struct FitField {
  std::string_view name;
  InformedBy informed_by;
  bool latency;
  double lowest;
  double highest;
  double (*documented)(const DocumentedTiming&);
  std::optional<double> (*get)(const MeasuredTiming&);
  void (*set)(MeasuredTiming&, double);
};

std::int64_t latency_ps(double us) { return std::llround(us * 100) * 10'000; }
double share(double value) { return static_cast<double>(std::llround(value * 1000)) / 1000; }
std::optional<double> us_of(std::optional<std::int64_t> ps) {
  return ps ? std::optional(static_cast<double>(*ps) / 1e6) : std::nullopt;
}

constexpr std::array<FitField, 4> kFields = {{
    {"launch_latency", InformedBy::any_output, true, 0.01, 1e5,
     [](const DocumentedTiming& d) { return static_cast<double>(d.launch_latency_ps) / 1e6; },
     [](const MeasuredTiming& m) { return us_of(m.launch_latency_ps); },
     [](MeasuredTiming& m, double us) { m.launch_latency_ps = latency_ps(us); }},
    {"network_latency", InformedBy::one_node_and_across_nodes, true, 0.01, 1e5,
     [](const DocumentedTiming& d) { return static_cast<double>(d.network_latency_ps) / 1e6; },
     [](const MeasuredTiming& m) { return us_of(m.network_latency_ps); },
     [](MeasuredTiming& m, double us) { m.network_latency_ps = latency_ps(us); }},
    {"network_efficiency", InformedBy::across_nodes, false, 0.01, 1.0,
     [](const DocumentedTiming& d) { return d.network_efficiency; },
     [](const MeasuredTiming& m) { return m.network_efficiency; },
     [](MeasuredTiming& m, double value) { m.network_efficiency = share(value); }},
    {"scale_up_efficiency", InformedBy::one_node, false, 0.01, 1.0,
     [](const DocumentedTiming& d) { return d.scale_up_efficiency; },
     [](const MeasuredTiming& m) { return m.scale_up_efficiency; },
     [](MeasuredTiming& m, double value) { m.scale_up_efficiency = share(value); }},
}};

std::string field_names() {
  std::vector<std::string_view> names;
  for (const FitField& field : kFields) names.push_back(field.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

bool informs(const FitField& field, OutputScales scales) {
  switch (field.informed_by) {
    case InformedBy::any_output: return true;
    case InformedBy::one_node: return scales.one_node;
    case InformedBy::across_nodes: return scales.across_nodes;
    case InformedBy::one_node_and_across_nodes: return scales.one_node && scales.across_nodes;
  }
  return false;
}

// The network's fields mean nothing without an output across nodes.
bool needs_nodes(const FitField& field) {
  return field.informed_by == InformedBy::across_nodes ||
         field.informed_by == InformedBy::one_node_and_across_nodes;
}

// The fields to fit: those --fit names, else every one the outputs tell apart.
std::vector<const FitField*> fields_to_fit(const std::vector<std::string>& names,
                                           OutputScales scales) {
  for (const std::string& name : names) {
    if (std::ranges::none_of(kFields, [&](const FitField& f) { return f.name == name; })) {
      throw Error(fmt::format("--fit {}: expected some of {}", name, field_names()));
    }
  }
  std::vector<const FitField*> fields;
  for (const FitField& field : kFields) {
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

// The search runs over log(us) for latencies and the share itself for efficiencies.
double to_search(const FitField& field, double value) {
  return field.latency ? std::log(value) : value;
}
double from_search(const FitField& field, double t) { return field.latency ? std::exp(t) : t; }

struct Fit {
  MeasuredTiming measured;
  double error = 0;
};

// One field's best value with the others held: a grid over its range, then a golden-section
// search between the best grid point's neighbours. Taken only if it lowers the error.
void fit_field(const FitField& field, const std::vector<CalibrationOutput>& outputs, Fit& fit) {
  const auto error_at = [&](double t) {
    MeasuredTiming trial = fit.measured;
    field.set(trial, from_search(field, t));
    return mean_log_error(outputs, trial);
  };
  constexpr int kGridPoints = 49;
  const double low = to_search(field, field.lowest);
  const double step = (to_search(field, field.highest) - low) / (kGridPoints - 1);
  int best_point = 0;
  double best_error = error_at(low);
  for (int point = 1; point < kGridPoints; ++point) {
    const double error = error_at(low + point * step);
    if (error < best_error) std::tie(best_point, best_error) = std::pair(point, error);
  }
  // Golden section: each step keeps one inner point and its error, and times one new point.
  double a = low + std::max(best_point - 1, 0) * step;
  double b = low + std::min(best_point + 1, kGridPoints - 1) * step;
  const double golden = (std::sqrt(5.0) - 1) / 2;
  double c = b - golden * (b - a), d = a + golden * (b - a);
  double error_c = error_at(c), error_d = error_at(d);
  for (int iteration = 0; iteration < 40; ++iteration) {
    if (error_c < error_d) {
      b = d;
      std::tie(d, error_d) = std::pair(c, error_c);
      c = b - golden * (b - a);
      error_c = error_at(c);
    } else {
      a = c;
      std::tie(c, error_c) = std::pair(d, error_d);
      d = a + golden * (b - a);
      error_d = error_at(d);
    }
  }
  double best_t = low + best_point * step;
  const double middle = (a + b) / 2;
  if (const double error = error_at(middle); error < best_error) {
    best_t = middle;
    best_error = error;
  }
  if (best_error < fit.error) {
    field.set(fit.measured, from_search(field, best_t));
    fit.error = best_error;
  }
}

// Coordinate search: each field in turn, until a round lowers the error by less than 1e-9.
Fit fit_fields(const std::vector<const FitField*>& fields,
               const std::vector<CalibrationOutput>& outputs, const MeasuredTiming& start) {
  Fit fit{start, mean_log_error(outputs, start)};
  for (int round = 0; round < 10; ++round) {
    const double before = fit.error;
    for (const FitField* field : fields) fit_field(*field, outputs, fit);
    if (before - fit.error < 1e-9) break;
  }
  return fit;
}

ErrorSummary output_summary(const CalibrationOutput& output, const MeasuredTiming& measured) {
  const std::vector<double> times_us = predicted_us(output, measured);
  std::vector<double> errors;
  for (std::size_t row = 0; row < times_us.size(); ++row) {
    errors.push_back(relative_error(times_us[row], output.measured_us[row]));
  }
  return summarize_errors(errors);
}

std::string value_text(const FitField& field, std::optional<double> value) {
  if (!value) return "-";
  if (field.latency) return format_duration_ps(latency_ps(*value));
  return fmt::format("{:.3f}", *value);
}

void print_fields(const std::vector<const FitField*>& fitted, const DocumentedTiming& documented,
                  const MeasuredTiming& measured, std::ostream& out) {
  out << fmt::format("# {:<22}{:>14}{:>14}\n", "field", "documented", "fitted");
  for (const FitField& field : kFields) {
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
    const ErrorSummary before = output_summary(output, start);
    const ErrorSummary after = output_summary(output, fitted);
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
                              field_names()))
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
  const OutputScales scales{
      .one_node = std::ranges::any_of(outputs, [](const auto& o) { return o.nodes == 1; }),
      .across_nodes = std::ranges::any_of(outputs, [](const auto& o) { return o.nodes > 1; })};
  const std::vector<const FitField*> fields = fields_to_fit(options.fit, scales);
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
