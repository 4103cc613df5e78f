#pragma once
// The time of one collective the way NCCL and RCCL run it: an algorithm (ring, tree, NVLS,
// NVLS-tree, PAT, CollNet) and
// a protocol (LL, LL128, Simple), each with its own start, per-hop latency and usable
// bandwidth, over a Fabric's scale-up links and NICs, after the GPU's fixed part and no sooner
// than the host's interval between two collectives. Every algorithm x protocol the fabric can
// run is timed, and the library runs the one its own tuner estimates fastest
// (cost_model/library_tuner.h), as NCCL does; a caller may force either, and
// a forced choice the fabric cannot run falls back with a note. The formulas and where every
// constant comes from: docs/collective-timing.md.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cost_model/fabric.h"

namespace spmd::cost_model {

enum class TimedOp { all_reduce, all_gather, reduce_scatter, broadcast, all_to_all, permute };
// nvls: the reduction done in the NVSwitches (NVLink SHARP), one node. nvlstree: NVLS inside
// each node and a tree between nodes. pat: Parallel Aggregated Trees, all-gather and
// reduce-scatter with one GPU per node. collnet: the reduction done in the network's switches
// (InfiniBand SHARP; NCCL's CollNet Direct), only where the fabric says the network can.
enum class LibraryAlgorithm { ring, tree, nvls, nvlstree, pat, collnet, allpairs };
enum class Protocol { ll, ll128, simple };

// NVLS and NVLS-tree: the algorithms whose sums the NVLink switches compute (a fabric's
// in_switch_reduction).
bool reduces_in_switches(LibraryAlgorithm algorithm);

std::string_view timed_op_name(TimedOp op);
// "ring", "tree", "nvls", "nvlstree", "pat", "collnet", "allpairs"
std::string_view library_algorithm_name(LibraryAlgorithm algorithm);
std::string_view protocol_name(Protocol protocol);                    // "LL", "LL128", "Simple"
// The inverses (case-insensitive); spmd::Error listing the names otherwise.
TimedOp timed_op_from_name(std::string_view name);
LibraryAlgorithm library_algorithm_from_name(std::string_view name);
Protocol protocol_from_name(std::string_view name);

// What a run, a machine or a call forces, as NCCL_ALGO / NCCL_PROTO do; unset: the library's
// choice.
struct LibraryChoice {
  std::optional<LibraryAlgorithm> algorithm;
  std::optional<Protocol> protocol;
};

struct TimingRequest {
  TimedOp op = TimedOp::all_reduce;
  // nccl-tests' size: all_reduce / broadcast / all_to_all / permute the buffer on each rank,
  // all_gather the gathered output, reduce_scatter the per-rank input.
  std::int64_t bytes = 0;
  int ranks = 1;
  // How many of the group's ranks share a node (the most on any one). 0: the group lies on
  // consecutive devices, filling ceil(ranks / devices_per_node) nodes. Fewer than the node's
  // devices: the node's other devices run sibling groups of the same collective (an SPMD
  // program's groups run at once), so the group has its own GPUs' share of the node's NICs, and
  // on a full mesh only the links between its own GPUs.
  int ranks_per_node = 0;
  // The size of one element: a schedule that splits the buffer into whole elements runs only
  // where they divide it (RCCL's MSCCL all-pairs).
  int element_bytes = 4;
  std::optional<LibraryAlgorithm> algorithm;  // forced, else the library's choice
  std::optional<Protocol> protocol;           // forced, else the library's choice
};

struct TimedChoice {
  LibraryAlgorithm algorithm = LibraryAlgorithm::ring;
  Protocol protocol = Protocol::simple;
  std::int64_t time_ps = 0;
  std::string fallback;  // why a forced algorithm or protocol was not used; empty if it was
  std::string label() const;  // "ring/LL128"
};

// The constants a machine's measured timing (Fabric::measured) replaces, as
// docs/collective-timing.md gives them for the fabric's generation, host, launch and network.
struct DocumentedTiming {
  std::int64_t launch_latency_ps = 0;
  std::int64_t network_latency_ps = 0;  // the Simple protocol's hop
  double network_efficiency = 0;
  double scale_up_efficiency = 0;
};
DocumentedTiming documented_timing(const Fabric& fabric);

// Every algorithm x protocol the library can run for the request on the fabric, timed, in a
// fixed order.
std::vector<TimedChoice> timed_choices(const Fabric& fabric, const TimingRequest& request);
// The one of them the library runs: among those the request allows, the one NCCL's tuner
// estimates fastest (the fastest on AMD and for the ops its tuner does not estimate); where
// the request allows none, the library's choice among all, with a fallback note.
TimedChoice time_collective(const Fabric& fabric, const TimingRequest& request);

}  // namespace spmd::cost_model
