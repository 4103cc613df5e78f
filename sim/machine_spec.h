#pragma once
// The machine a program is simulated on: how many devices, their memory and compute, how they
// are wired, and which collective algorithm each op uses. Read from a JSON file whose format
// docs/machine-format.md describes; every error names the value's JSON path
// ("topology.dims[1]: 0, expected a positive integer").

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "cost_model/collective_timing.h"
#include "cost_model/fabric.h"
#include "sim/faults.h"
#include "sim/link_sharing.h"
#include "topology/topology_spec.h"

namespace spmd::sim {

struct MachineSpec {
  std::string name = "machine";
  int devices = 0;
  std::int64_t memory_bytes = std::int64_t{80} << 30;             // 80 GiB per device
  double peak_flops_per_s = 1e15;                                 // FLOP/s per device
  std::int64_t memory_bandwidth_bytes_per_s = 3'000'000'000'000;  // 3 TB/s per device
  topology::TopologySpec topology;
  // By op ("all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast"); an op that
  // is absent has its algorithm chosen automatically.
  std::map<std::string, collectives::Algorithm> algorithms;
  std::int64_t pipeline_chunk_bytes = std::int64_t{2} << 20;  // 2 MiB
  // How transfers crossing the same link at once share it ("link_sharing": "fair" or "fifo").
  LinkSharing link_sharing = LinkSharing::fair;
  // Injected faults (sim/faults.h, "faults"): stragglers, degraded or failed links, failed
  // devices, each from a time on.
  std::vector<Fault> faults;
  // The collective library's view of the hardware ("fabric"): when present, each collective
  // is timed as NCCL / RCCL run it (cost_model/collective_timing.h) instead of by executing its
  // schedule on the links; the data still moves by the schedule.
  std::optional<cost_model::Fabric> fabric;
  // With a fabric: the library's algorithm and protocol on this machine (the fabric section's
  // "algorithm" and "protocol", as NCCL_ALGO / NCCL_PROTO set in its environment); a run's
  // choice (SimOptions::library) and a call's (ScopedLibraryChoice) come first.
  cost_model::LibraryChoice library;
};

// spmd::Error naming the JSON path of the bad value: unknown fields, wrong types, bad units,
// a device count that the topology disagrees with.
MachineSpec machine_from_json(const nlohmann::json& json);
// As machine_from_json, with errors prefixed by `path` ("machines/a.json: devices: ..."). A path
// that is no file but a preset's name (sim/machine_presets.h) gives that preset.
MachineSpec load_machine_file(const std::string& path);
// Every field written out; machine_from_json reads it back as the same spec.
nlohmann::json machine_to_json(const MachineSpec& machine);
// Whether `devices` devices are part of one node or whole nodes of `devices_per_node` devices:
// what a machine with a fabric must be.
bool devices_fit_nodes(int devices, int devices_per_node);

}  // namespace spmd::sim
