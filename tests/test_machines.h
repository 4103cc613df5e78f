#pragma once
// Machines for simulator tests whose times are easy to read: 1 FLOP and 1 byte of memory traffic
// per picosecond, on a topology named as --topology names it.

#include <optional>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "sim/machine_spec.h"
#include "sim/machine.h"
#include "topology/topology_spec.h"

namespace spmd::test_machines {

inline sim::MachineSpec machine_for(const std::string& topology, int devices,
                                    topology::LinkSpec link = {}) {
  sim::MachineSpec spec;
  spec.devices = devices;
  spec.topology = topology::topology_from_text(topology, devices, {.link = link});
  spec.peak_flops_per_s = 1e12;                           // 1 FLOP per ps
  spec.memory_bandwidth_bytes_per_s = 1'000'000'000'000;  // 1 byte per ps
  return spec;
}

// One-way ICI link of a TPU v4 / v5e (docs/machine-presets.md): 45 GB/s, 1 us per hop.
inline constexpr topology::LinkSpec kIci{.bandwidth_bytes_per_s = 45'000'000'000,
                                         .latency_ps = 1'000'000};

// A torus of `dims` with ICI links on every dimension.
inline sim::MachineSpec ici_torus_machine(const std::vector<int>& dims) {
  sim::MachineSpec spec;
  spec.devices = 1;
  for (int d : dims) spec.devices *= d;
  spec.topology =
      topology::TorusSpec{{.devices = spec.devices,
                           .dims = dims,
                           .dim_links = std::vector<topology::LinkSpec>(dims.size(), kIci)}};
  return spec;
}

// The axis names of a mesh laid on a torus one axis per dimension: a0, a1, ...
inline std::vector<std::string> torus_axis_names(std::size_t dims) {
  std::vector<std::string> names;
  for (std::size_t j = 0; j < dims; ++j) names.push_back("a" + std::to_string(j));
  return names;
}

// The options of a run over a mesh laid on a torus one axis per dimension: ranks in ring order,
// and mesh axis j on torus dimension j, as the closed forms take it (the automatic placement may
// lay a {2, 2, 4} mesh otherwise). `algorithm` unset: the automatic choice.
inline sim::SimOptions torus_run_options(std::optional<collectives::Algorithm> algorithm,
                                         bool cost_only, bool fast_path) {
  return {.cost_only = cost_only,
          .algorithm = algorithm,
          .ring_by_rank = true,
          .fast_path = fast_path,
          .placement = {.kind = sim::PlacementSpec::Kind::row_major}};
}

}  // namespace spmd::test_machines
