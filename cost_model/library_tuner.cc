#include "cost_model/library_tuner.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace spmd::cost_model {
namespace {

// NCCL's tuner tables (src/graph/tuning.cc), per protocol LL, LL128, Simple, in microseconds and
// GB/s as NCCL writes them.
using PerProtocol = std::array<double, 3>;
constexpr PerProtocol kRingBaseUs = {6.6, 14.0, 8.4};  // baseLat
constexpr PerProtocol kTreeBaseUs = {6.8, 14.0, 8.4};
// hwLat[NVLINK] of the tree (the ring's is kNcclRingNvlinkHopUs).
constexpr PerProtocol kTreeNvlinkHopUs = {0.6, 1.25, 4.0};
// hwLat[NET] of the ring (the tree's is kNcclTreeNetHopUs); with one GPU a node a ring's network
// step costs the tree's.
constexpr PerProtocol kRingNetHopUs = {2.7, 4.0, 14.0};
// A network step costs the proxy at least this to post (getNetOverhead), three times with Simple.
constexpr double kNetOverheadUs = 1.0;
// LL's rate across nodes (llMaxBws on Intel and Arm hosts): two nodes, more than two.
constexpr double kLlMaxTwoNodesGBps = 39.0;
constexpr double kLlMaxMoreNodesGBps = 20.4;
// treeCorrectionFactor, indexed by log2(bytes / 64): measured trees run below NCCL's model at
// medium sizes.
constexpr std::array<PerProtocol, 23> kTreeCorrection = {{
    {1.0, 1.0, .9}, {1.0, 1.0, .9}, {1.0, 1.0, .9}, {1.0, 1.0, .9}, {.9, 1.0, .9},  {.8, .9, .9},
    {.7, .8, .9},   {.7, .8, .8},   {.7, .8, .7},   {.7, .7, .6},   {.6, .6, .6},   {.5, .6, .5},
    {.4, .6, .5},   {.4, .6, .5},   {.5, .6, .5},   {.6, .6, .6},   {.7, .8, .7},   {.8, .9, .8},
    {.9, .9, .7},   {1.0, .9, .7},  {1.0, .9, .8},  {1.0, 1.0, .9}, {1.0, 1.0, .9},
}};
// An inter-node ring with Simple pays its latency 1.4 times over (the "plateau effect"), 1.9
// times before Ampere (compute capability below 8.0).
double ring_plateau(GpuGeneration generation) {
  return generation == GpuGeneration::volta ? 1.9 : 1.4;
}
// NVLS and NVLS-tree: a pass through the switches, a network level of NVLS-tree, and the share
// of the rate NCCL credits an all-reduce through the switches.
constexpr double kNvlsNvlinkUs = 25.0;
constexpr double kNvlsTreeNetUs = 20.9;
constexpr double kNvlsRateShare = 5.0 / 6.0;
// NVLS inside one node: one channel per GPU, each at most scale_up / (n + 1) (a GPU's links carry
// every channel once and its own twice) and at most the fastest per-channel speed the topology
// search tries (src/graph/search.cc), times nvlsEfficiency.
double nvls_channel_cap_gbps(GpuGeneration generation) {
  return generation == GpuGeneration::blackwell ? 90.0 : 60.0;
}
double nvls_efficiency(GpuGeneration generation) {
  return generation == GpuGeneration::blackwell ? 0.74 : 0.85;
}
// CollNet Direct's hops: one NVLink pass and the network's.
constexpr double kCollNetNvlinkUs = 3.7;
constexpr double kCollNetNetUs = 31.0;
constexpr double kPatBaseUs = 8.0;
constexpr double kNoEstimate = std::numeric_limits<double>::infinity();

std::size_t index(Protocol protocol) { return static_cast<std::size_t>(protocol); }

// Across nodes, from Hopper on, NCCL's tree search falls back from the balanced tree (a node's
// parent and children on two GPUs near one NIC) to the simple tree (all of a channel's network
// traffic on one GPU) when each NIC has a single near GPU, as on DGX/HGX H100 and GH200
// (src/graph/search.cc, "Try a simpler tree"); its tuner then credits the tree 0.85 of its rate
// (src/graph/tuning.cc, NCCL_TOPO_PATTERN_TREE).
constexpr double kSimpleTreePatternShare = 0.85;
bool simple_tree_pattern(const TunerGroup& group) {
  return group.nodes > 1 && group.nic_per_gpu && group.generation != GpuGeneration::ampere &&
         group.generation != GpuGeneration::volta;
}

double log2_floor(double value) { return value < 1 ? 0 : std::floor(std::log2(value)); }

// NCCL's treeCorrectionFactor at a whole index log2(bytes / 64); none beyond its table.
double tree_correction_at(Protocol protocol, double table_index) {
  if (table_index >= static_cast<double>(kTreeCorrection.size())) return 1.0;
  return kTreeCorrection[static_cast<std::size_t>(table_index)][index(protocol)];
}

// The rate NCCL's channels add up to. Inside one node, the scale-up links. Across nodes a ring's
// channels run at the NICs' rate; a tree's search may raise its intra-node rate to twice the
// NICs' (src/graph/search.cc), and tuning.cc takes that intra-node rate for two nodes.
double ring_channels_gbps(const TunerGroup& group) {
  return group.nodes == 1 ? group.scale_up_gbps : group.node_nics_gbps;
}
double tree_channels_gbps(const TunerGroup& group) {
  if (group.nodes == 1) return group.scale_up_gbps;
  if (group.nodes > 2) return group.node_nics_gbps;
  return std::min(group.scale_up_gbps, 2 * group.node_nics_gbps);
}

double ll_max_gbps(const TunerGroup& group) {
  if (group.nodes > 1) return group.nodes == 2 ? kLlMaxTwoNodesGBps : kLlMaxMoreNodesGBps;
  switch (group.generation) {
    case GpuGeneration::volta: return 39.0;
    case GpuGeneration::ampere: return 87.7;
    case GpuGeneration::blackwell: return 282.0;
    default: return 141.0;
  }
}

double ring_estimate_us(const TunerGroup& group, TimedOp op, Protocol protocol, double bytes) {
  const std::size_t p = index(protocol);
  const bool all_reduce = op == TimedOp::all_reduce;
  const double steps = all_reduce ? 2.0 * (group.ranks - 1) : group.ranks - 1.0;
  const double network_steps = group.nodes == 1 ? 0 : (all_reduce ? 2 : 1) * (group.nodes - 1.0);
  double step_us = kNcclRingNvlinkHopUs[p];
  if (group.nodes > 1) {
    step_us = std::max(step_us, kNetOverheadUs * (protocol == Protocol::simple ? 3 : 1));
  }
  const double net_hop_us = group.per_node == 1 ? kNcclTreeNetHopUs[p] : kRingNetHopUs[p];
  double latency_us =
      kRingBaseUs[p] + (steps - network_steps) * step_us + network_steps * net_hop_us;
  if (protocol == Protocol::simple && group.nodes > 1 && all_reduce) {
    latency_us *= ring_plateau(group.generation);
  }
  double bus_gbps = ring_channels_gbps(group);
  if (protocol == Protocol::ll) bus_gbps = std::min(ll_max_gbps(group), bus_gbps * 0.5);
  if (protocol == Protocol::ll128) bus_gbps *= 0.92;
  return latency_us + bytes / (bus_gbps * group.ranks / steps * 1e3);
}

double tree_estimate_us(const TunerGroup& group, Protocol protocol, double bytes) {
  const std::size_t p = index(protocol);
  double bus_gbps = tree_channels_gbps(group) * 0.92;
  if (protocol == Protocol::ll) bus_gbps = std::min(bus_gbps / 3.8, ll_max_gbps(group));
  if (protocol == Protocol::ll128) bus_gbps *= group.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
  if (simple_tree_pattern(group)) bus_gbps *= kSimpleTreePatternShare;
  bus_gbps *= tree_rate_correction(protocol, bytes);
  const double latency_us = kTreeBaseUs[p] + 2 * ((group.per_node - 1) * kTreeNvlinkHopUs[p] +
                                                  log2_floor(group.nodes) * kNcclTreeNetHopUs[p]);
  return latency_us + bytes / (bus_gbps * 0.5 * 1e3);
}

double nvls_estimate_us(const TunerGroup& group, double bytes) {
  const double n = group.ranks;
  const double channel_gbps =
      std::min(group.scale_up_gbps / (n + 1), nvls_channel_cap_gbps(group.generation));
  return kNvlsNvlinkUs + bytes / (n * channel_gbps * nvls_efficiency(group.generation) * 1e3);
}

double nvls_tree_estimate_us(const TunerGroup& group, double bytes) {
  const double network_gbps = group.nodes <= 2 ? group.node_nics_gbps : group.node_nics_gbps / 2;
  const double bus_gbps = std::min(group.scale_up_gbps, network_gbps);
  return kNvlsNvlinkUs + 2 * log2_floor(group.nodes) * kNvlsTreeNetUs +
         bytes / (bus_gbps * kNvlsRateShare * 1e3);
}

double collnet_estimate_us(const TunerGroup& group, double bytes) {
  const double local_peers = group.per_node - 1.0;
  const double latency_us = 2 * (std::min(1.0, local_peers) * kCollNetNvlinkUs +
                                 local_peers * kNcclCollNetPerLocalRankUs) +
                            kCollNetNetUs;
  return latency_us + bytes / (tree_channels_gbps(group) * kNcclCollNetRateShare * 0.5 * 1e3);
}

double pat_estimate_us(const TunerGroup& group, double bytes) {
  const double latency_us = kPatBaseUs +
                            log2_floor(group.nodes) * kNcclTreeNetHopUs[index(Protocol::simple)] *
                                kNcclPatLevelShareOfHop +
                            kNcclPatPerRankUs * group.ranks;
  return latency_us + bytes / (ring_channels_gbps(group) * kNcclPatRateShare * 1e3);
}

}  // namespace

double tree_rate_correction(Protocol protocol, double bytes) {
  return tree_correction_at(protocol, log2_floor(bytes / 64));
}

double smooth_tree_rate_correction(Protocol protocol, double bytes) {
  const double size_index = bytes < 64 ? 0.0 : std::log2(bytes / 64);
  const double below = std::floor(size_index);
  const double weight = size_index - below;
  return tree_correction_at(protocol, below) * (1 - weight) +
         tree_correction_at(protocol, below + 1) * weight;
}

bool library_estimates(GpuGeneration generation, TimedOp op) {
  return !is_amd(generation) &&
         (op == TimedOp::all_reduce || op == TimedOp::all_gather || op == TimedOp::reduce_scatter);
}

double library_estimate_us(const TunerGroup& group, TimedOp op, LibraryAlgorithm algorithm,
                           Protocol protocol, double bytes) {
  switch (algorithm) {
    case LibraryAlgorithm::ring: return ring_estimate_us(group, op, protocol, bytes);
    case LibraryAlgorithm::tree: return tree_estimate_us(group, protocol, bytes);
    case LibraryAlgorithm::nvlstree: return nvls_tree_estimate_us(group, bytes);
    case LibraryAlgorithm::collnet: return collnet_estimate_us(group, bytes);
    case LibraryAlgorithm::pat: return pat_estimate_us(group, bytes);
    case LibraryAlgorithm::allpairs: return kNoEstimate;  // RCCL's MSCCL: no NCCL estimate
    case LibraryAlgorithm::nvls: return nvls_estimate_us(group, bytes);
  }
  return kNoEstimate;
}

}  // namespace spmd::cost_model
