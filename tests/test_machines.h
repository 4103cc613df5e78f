#pragma once
// Machines for simulator tests whose times are easy to read: 1 FLOP and 1 byte of memory traffic
// per picosecond, on a topology named as --topology names it.

#include <string>

#include "sim/machine_spec.h"
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

}  // namespace spmd::test_machines
