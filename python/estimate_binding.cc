// estimate_hlo: XLA's compiled, SPMD-partitioned HLO text run cost-only on a simulated machine
// through the HLO import (hlo/hlo_program.h), as `spmdsim run MACHINE program.hlo` does, for
// spmdsim.estimate.

#include <fmt/format.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "hlo/hlo_module.h"
#include "hlo/hlo_program.h"
#include "python/bindings.h"
#include "reference/error.h"
#include "sim/cost_log.h"
#include "sim/machine.h"
#include "sim/machine_presets.h"
#include "traces/run_report.h"
#include "validation/collective_range.h"

namespace nb = nanobind;

namespace spmd::python {
namespace {

constexpr double kSecondsPerPicosecond = 1e-12;

// A preset at `devices` devices, or a machine file at its own count.
sim::MachineSpec estimate_machine(const std::string& machine, int devices) {
  try {
    if (machine_preset(machine)) return machine_preset_with_devices(machine, devices);
    sim::MachineSpec spec = machine_from_name_or_file(machine);
    if (spec.devices != devices) {
      throw Error(fmt::format("the machine file has {} devices, expected {} (devices)",
                              spec.devices, devices));
    }
    return spec;
  } catch (const Error& e) {
    throw Error(fmt::format("machine: {}", e.what()));
  }
}

// Whether a collective's groups (global device ids, placed row-major on the machine's nodes)
// reach past one node: which band of the collective's published errors its range takes.
bool crosses_nodes(const hlo::ImportedCollective& collective, int devices, int per_node) {
  const auto node_of = [per_node](int device) { return device / per_node; };
  for (const auto& [source, target] : collective.source_target_pairs) {
    if (node_of(source) != node_of(target)) return true;
  }
  if (!collective.source_target_pairs.empty()) return false;
  if (collective.groups.empty()) return devices > per_node;
  return std::any_of(collective.groups.begin(), collective.groups.end(), [&](const auto& group) {
    return std::any_of(group.begin(), group.end(),
                       [&](int device) { return node_of(device) != node_of(group.front()); });
  });
}

// The time range of each collective the step issued (validation/collective_range.h), in
// seconds; none where the machine has no fabric (a link-level machine file).
std::vector<std::optional<ValueRange>> collective_ranges(const hlo::HloModule& module,
                                                         const sim::MachineSpec& spec,
                                                         const sim::CostLog& log) {
  std::vector<std::optional<ValueRange>> ranges(log.collectives.size());
  if (!spec.fabric) return ranges;
  const std::vector<hlo::ImportedCollective> issued = hlo::step_collectives(module);
  for (std::size_t i = 0; i < log.collectives.size() && i < issued.size(); ++i) {
    const sim::CollectiveRecord& record = log.collectives[i];
    const double time_us = static_cast<double>(record.end_ps - record.start_ps) / 1e6;
    const ValueRange us = collective_time_range(
        *spec.fabric, crosses_nodes(issued[i], spec.devices, spec.fabric->devices_per_node),
        time_us);
    ranges[i] = ValueRange{.low = us.low * 1e-6, .high = us.high * 1e-6};
  }
  return ranges;
}

nb::dict collective_dict(const sim::CollectiveRecord& record) {
  nb::dict entry;
  entry["op"] = record.op;
  entry["call"] = record.call;
  entry["dtype"] = record.dtype;
  entry["shape"] = record.shape;
  entry["bytes"] = record.bytes;
  entry["time_s"] = static_cast<double>(record.end_ps - record.start_ps) * kSecondsPerPicosecond;
  entry["groups"] = record.groups;
  entry["group_size"] = record.group_size;
  entry["algorithm"] = record.algorithm;
  entry["busbw_bytes_per_s"] = record.busbw_bytes_per_s;
  return entry;
}

nb::dict estimate_dict(const hlo::HloModule& module, const sim::MachineSpec& spec,
                       const sim::CostLog& log) {
  const traces::RunTotals totals = traces::run_totals(log);
  nb::dict result;
  result["module"] = module.name;
  result["machine"] = spec.name;
  result["devices"] = spec.devices;
  result["step_time_s"] = static_cast<double>(totals.step_ps) * kSecondsPerPicosecond;
  result["compute_s"] = static_cast<double>(totals.compute_ps) * kSecondsPerPicosecond;
  result["exposed_communication_s"] =
      static_cast<double>(totals.exposed_communication_ps) * kSecondsPerPicosecond;
  result["memory_peak_bytes"] = totals.peak_memory_bytes;
  result["memory_per_device_bytes"] = spec.memory_bytes;
  // The step's range: the collectives' ranges, as far as their time is exposed; the compute as
  // the model gives it.
  const std::vector<std::optional<ValueRange>> ranges = collective_ranges(module, spec, log);
  double collective_s = 0, faster_s = 0, slower_s = 0;
  nb::list collectives;
  for (std::size_t i = 0; i < log.collectives.size(); ++i) {
    nb::dict entry = collective_dict(log.collectives[i]);
    const double time_s = nb::cast<double>(entry["time_s"]);
    collective_s += time_s;
    if (ranges[i]) {
      entry["time_range_s"] = nb::make_tuple(ranges[i]->low, ranges[i]->high);
      faster_s += time_s - ranges[i]->low;
      slower_s += ranges[i]->high - time_s;
    } else {
      entry["time_range_s"] = nb::none();
    }
    collectives.append(entry);
  }
  result["collectives"] = collectives;
  const double step_s = nb::cast<double>(result["step_time_s"]);
  const double exposed_share =
      collective_s > 0 ? std::min(1.0, nb::cast<double>(result["exposed_communication_s"]) /
                                           collective_s)
                       : 0;
  result["step_time_range_s"] =
      nb::make_tuple(step_s - exposed_share * faster_s, step_s + exposed_share * slower_s);
  return result;
}

nb::dict estimate_hlo(const std::string& hlo_text, const std::string& machine, int devices,
                      double compute_efficiency, double memory_efficiency,
                      const std::optional<std::string>& algorithm) {
  const hlo::HloModule module = hlo::parse_hlo_module(hlo_text, "<compiled HLO>");
  if (module.device_count() != devices) {
    throw Error(fmt::format(
        "devices: {}, but the compiled program runs on {} (replica_count {} x num_partitions {}); "
        "expected the mesh's device count",
        devices, module.device_count(), module.replica_count, module.num_partitions));
  }
  const sim::MachineSpec spec = estimate_machine(machine, devices);
  sim::SimOptions options{.cost_only = true};
  if (algorithm) {
    try {
      options.algorithm = collectives::algorithm_from_name(*algorithm);
    } catch (const Error& e) {
      throw Error(fmt::format("algorithm: {}", e.what()));
    }
  }
  sim::Machine simulated(spec, options);
  const sim::CostLog log = hlo::run_hlo_module(
      simulated, module,
      {.compute_efficiency = compute_efficiency, .memory_efficiency = memory_efficiency});
  return estimate_dict(module, spec, log);
}

std::vector<std::string> preset_names() { return machine_preset_names(); }

}  // namespace

void bind_estimate(nb::module_& module) {
  module.def("estimate_hlo", &estimate_hlo, nb::arg("hlo_text"), nb::arg("machine"),
             nb::arg("devices"), nb::arg("compute_efficiency") = hlo::kDefaultComputeEfficiency,
             nb::arg("memory_efficiency") = hlo::kDefaultMemoryEfficiency,
             nb::arg("algorithm").none() = nb::none(),
             "Runs compiled HLO text cost-only on the named machine: time, memory, collectives.");
  module.def("machine_preset_names", &preset_names, "The machine presets, in a fixed order.");
}

}  // namespace spmd::python
