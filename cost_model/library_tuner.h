#pragma once
// NCCL's own estimate of how long each algorithm x protocol takes (its tuner, src/graph/tuning.cc),
// which is what it chooses by. The estimate models the library's decision, not the time: where it
// ranks the candidates differently from the time they take (collective_timing.cc), NCCL runs the
// one its estimate ranks first, and so does the simulator. docs/collective-timing.md cites each
// constant.

#include <array>

#include "cost_model/collective_timing.h"
#include "cost_model/fabric.h"

namespace spmd::cost_model {

// NCCL's latency of one ring step over NVLink per protocol LL, LL128, Simple (hwLat[NVLINK]),
// which the time model also takes for an NVLink hop.
inline constexpr std::array<double, 3> kNcclRingNvlinkHopUs = {0.6, 1.9, 3.4};

// NCCL's latency of a tree's network step per protocol (hwLat[NET]), against which the time
// model scales RCCL's.
inline constexpr std::array<double, 3> kNcclTreeNetHopUs = {5.0, 8.5, 14.0};

// NCCL's own models of PAT and CollNet Direct, which the time model also takes for want of a
// published measurement of either (docs/collective-timing.md): PAT costs 2.8 us per rank and a
// network hop / 3.5 per level, at 0.75 of the ring's rate; CollNet 0.4 us per local rank to
// serialize a node's arrivals, at 0.85 of its rate from Hopper on.
inline constexpr double kNcclPatPerRankUs = 2.8;
inline constexpr double kNcclPatLevelShareOfHop = 1.0 / 3.5;
inline constexpr double kNcclPatRateShare = 0.75;
inline constexpr double kNcclCollNetPerLocalRankUs = 0.4;
inline constexpr double kNcclCollNetRateShare = 0.85;

// What NCCL's tuner knows of a group: its shape and the rates its topology search found, taken
// as the spec sheet's (one GPU's scale-up rate, and the NICs the group's GPUs drive on a node,
// per direction).
struct TunerGroup {
  GpuGeneration generation = GpuGeneration::hopper;
  int ranks = 1;
  int nodes = 1;
  int per_node = 1;
  double scale_up_gbps = 0;
  double node_nics_gbps = 0;
  // Whether each GPU of a node has a NIC of its own (none shared by two GPUs).
  bool nic_per_gpu = true;
};

// Whether the tuner's estimate decides the choice for `op` on `generation`: NCCL's all-reduce,
// all-gather and reduce-scatter. RCCL (AMD) tunes with its own per-GPU tables, which are not
// modelled; there, and for the other ops, the fastest candidate is taken.
bool library_estimates(GpuGeneration generation, TimedOp op);

// NCCL's correction to a tree all-reduce's rate for `bytes` (treeCorrectionFactor): measured
// trees run below their model at medium sizes, down to 0.4 of it.
double tree_rate_correction(Protocol protocol, double bytes);

// The same for the time a tree takes: NCCL's value at every power of two, log-linear between
// them, so that a slightly larger buffer never takes less time (NCCL's steps would make a
// 512 MiB tree faster than one of 500 MiB).
double smooth_tree_rate_correction(Protocol protocol, double bytes);

// NCCL's estimate in microseconds of `algorithm` x `protocol` for `bytes` (nccl-tests' size);
// +infinity where it has none.
double library_estimate_us(const TunerGroup& group, TimedOp op, LibraryAlgorithm algorithm,
                           Protocol protocol, double bytes);

}  // namespace spmd::cost_model
