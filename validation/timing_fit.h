#pragma once
// The fit behind `spmdsim calibrate` (docs/calibrate.md): the values a spec sheet does not give
// (cost_model::MeasuredTiming: the GPU's fixed part of a collective, a network hop's latency, the
// share of the NICs' and scale-up links' rate a ring reaches) chosen so that the closed-form
// timing comes closest to nccl-tests outputs measured on the machine. The objective is the mean
// |ln(predicted / measured)|; the search, a coordinate search with a grid and a golden section
// per field.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cost_model/collective_timing.h"
#include "validation/calibration_output.h"

namespace spmd {

// Which outputs tell a field apart from the others. The launch latency sets every floor; the
// scale-up links' share, a one-node output's large sizes; the NICs' share, large sizes across
// nodes. A network hop's latency shows only across nodes, where it raises the same floor as the
// launch: only a one-node output beside it, which fixes the launch, separates the two.
enum class InformedBy { any_output, one_node, across_nodes, one_node_and_across_nodes };

// Whether the outputs include one on one node and one across several.
struct OutputScales {
  bool one_node = false;
  bool across_nodes = false;
};
OutputScales output_scales(const std::vector<CalibrationOutput>& outputs);

// A field of MeasuredTiming the fit can set: latencies in microseconds, searched on a log scale
// and kept to 10 ns; efficiencies as shares, kept to 0.001.
struct FitField {
  std::string_view name;
  InformedBy informed_by;
  bool latency;
  double lowest;
  double highest;
  double (*documented)(const cost_model::DocumentedTiming&);
  std::optional<double> (*get)(const cost_model::MeasuredTiming&);
  void (*set)(cost_model::MeasuredTiming&, double);
};

// Every field the fit can set: launch_latency, network_latency, network_efficiency,
// scale_up_efficiency, in that order.
std::span<const FitField> fittable_fields();
// Their names, comma separated.
std::string fittable_field_names();
// Whether outputs of these scales tell the field apart from the others.
bool informs(const FitField& field, OutputScales scales);
// The network's fields mean nothing without an output across nodes.
bool needs_nodes(const FitField& field);

// A latency field's value as the fit keeps it: `us` microseconds to the nearest 10 ns.
std::int64_t fitted_latency_ps(double us);

// What the fit minimizes: the mean over every size of every output of |ln(predicted /
// measured)|, which weighs a prediction twice too slow as one twice too fast.
double mean_log_error(const std::vector<CalibrationOutput>& outputs,
                      const cost_model::MeasuredTiming& measured);

struct Fit {
  cost_model::MeasuredTiming measured;
  double error = 0;  // mean_log_error with `measured`
};

// Coordinate search from `start`: each field in turn, until a round lowers the error by less
// than 1e-9. A field's value is taken only where it lowers the error.
Fit fit_fields(const std::vector<const FitField*>& fields,
               const std::vector<CalibrationOutput>& outputs,
               const cost_model::MeasuredTiming& start);

}  // namespace spmd
