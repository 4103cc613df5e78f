// estimate_hlo: XLA's compiled, SPMD-partitioned HLO text run cost-only on a simulated machine
// through the HLO import (hlo/hlo_program.h), as `spmdsim run MACHINE program.hlo` does, for
// spmdsim.estimate.

#include <fmt/format.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

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
  nb::list collectives;
  for (const sim::CollectiveRecord& record : log.collectives) {
    collectives.append(collective_dict(record));
  }
  result["collectives"] = collectives;
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
