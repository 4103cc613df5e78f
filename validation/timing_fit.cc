#include "validation/timing_fit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>
#include <utility>

namespace spmd {
namespace {

using cost_model::DocumentedTiming;
using cost_model::MeasuredTiming;

double share(double value) { return static_cast<double>(std::llround(value * 1000)) / 1000; }
std::optional<double> us_of(std::optional<std::int64_t> ps) {
  return ps ? std::optional(static_cast<double>(*ps) / 1e6) : std::nullopt;
}

constexpr std::array<FitField, 4> kFields = {{
    {"launch_latency", InformedBy::any_output, true, 0.01, 1e5,
     [](const DocumentedTiming& d) { return static_cast<double>(d.launch_latency_ps) / 1e6; },
     [](const MeasuredTiming& m) { return us_of(m.launch_latency_ps); },
     [](MeasuredTiming& m, double us) { m.launch_latency_ps = fitted_latency_ps(us); }},
    {"network_latency", InformedBy::one_node_and_across_nodes, true, 0.01, 1e5,
     [](const DocumentedTiming& d) { return static_cast<double>(d.network_latency_ps) / 1e6; },
     [](const MeasuredTiming& m) { return us_of(m.network_latency_ps); },
     [](MeasuredTiming& m, double us) { m.network_latency_ps = fitted_latency_ps(us); }},
    {"network_efficiency", InformedBy::across_nodes, false, 0.01, 1.0,
     [](const DocumentedTiming& d) { return d.network_efficiency; },
     [](const MeasuredTiming& m) { return m.network_efficiency; },
     [](MeasuredTiming& m, double value) { m.network_efficiency = share(value); }},
    {"scale_up_efficiency", InformedBy::one_node, false, 0.01, 1.0,
     [](const DocumentedTiming& d) { return d.scale_up_efficiency; },
     [](const MeasuredTiming& m) { return m.scale_up_efficiency; },
     [](MeasuredTiming& m, double value) { m.scale_up_efficiency = share(value); }},
}};

// The search runs over log(us) for latencies and the share itself for efficiencies.
double to_search(const FitField& field, double value) {
  return field.latency ? std::log(value) : value;
}
double from_search(const FitField& field, double t) { return field.latency ? std::exp(t) : t; }

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

}  // namespace

OutputScales output_scales(const std::vector<CalibrationOutput>& outputs) {
  return {.one_node = std::ranges::any_of(outputs, [](const auto& o) { return o.nodes == 1; }),
          .across_nodes = std::ranges::any_of(outputs, [](const auto& o) { return o.nodes > 1; })};
}

std::span<const FitField> fittable_fields() { return kFields; }

std::string fittable_field_names() {
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

bool needs_nodes(const FitField& field) {
  return field.informed_by == InformedBy::across_nodes ||
         field.informed_by == InformedBy::one_node_and_across_nodes;
}

std::int64_t fitted_latency_ps(double us) { return std::llround(us * 100) * 10'000; }

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

}  // namespace spmd
