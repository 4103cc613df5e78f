// NCCL's own estimate (cost_model/library_tuner.h) against its formulas in src/graph/tuning.cc,
// worked by hand for one case of each term.
#include "cost_model/library_tuner.h"

#include <gtest/gtest.h>

#include <cmath>

namespace spmd::cost_model {
namespace {

constexpr double kMiB = 1 << 20;

// 8 H100 of one NVSwitch node: NCCL's channels add up to the scale-up rate.
TunerGroup one_h100_node() { return {GpuGeneration::hopper, 8, 1, 8, 450, 400}; }

// 4 nodes of 4 GH200, each GPU with a 25 GB/s NIC.
TunerGroup four_gh200_nodes() { return {GpuGeneration::hopper, 16, 4, 4, 450, 100}; }

double estimate_us(const TunerGroup& group, LibraryAlgorithm algorithm, Protocol protocol,
                   double bytes, TimedOp op = TimedOp::all_reduce) {
  return library_estimate_us(group, op, algorithm, protocol, bytes);
}

TEST(LibraryTuner, RingInsideANodeIsBaseLatencyPlusNvlinkStepsAndItsProtocolsRate) {
  // LL: min(llMaxBw 141, 450 / 2) = 141 GB/s of bus, x 8/14 of algorithm rate.
  EXPECT_NEAR(estimate_us(one_h100_node(), LibraryAlgorithm::ring, Protocol::ll, kMiB),
              6.6 + 14 * 0.6 + kMiB / (141 * 8.0 / 14 * 1e3), 1e-9);
  // LL128: 0.92 of the scale-up rate.
  EXPECT_NEAR(estimate_us(one_h100_node(), LibraryAlgorithm::ring, Protocol::ll128, kMiB),
              14 + 14 * 1.9 + kMiB / (450 * 0.92 * 8.0 / 14 * 1e3), 1e-9);
  // All-gather: n - 1 steps, the rate x n / (n - 1).
  EXPECT_NEAR(estimate_us(one_h100_node(), LibraryAlgorithm::ring, Protocol::simple, kMiB,
                          TimedOp::all_gather),
              8.4 + 7 * 3.4 + kMiB / (450 * 8.0 / 7 * 1e3), 1e-9);
}

TEST(LibraryTuner, RingAcrossNodesPaysNetworkStepsAndWithSimpleThePlateau) {
  // 30 steps, 6 of them across the network; a step inside a node costs at least the proxy's
  // 1 us (3 with Simple); Simple's latency is then 1.4 times over.
  EXPECT_NEAR(estimate_us(four_gh200_nodes(), LibraryAlgorithm::ring, Protocol::simple, kMiB),
              (8.4 + 24 * 3.4 + 6 * 14) * 1.4 + kMiB / (100 * 16.0 / 30 * 1e3), 1e-9);
  // LL across more than two nodes: llMaxBw 20.4 GB/s.
  EXPECT_NEAR(estimate_us(four_gh200_nodes(), LibraryAlgorithm::ring, Protocol::ll, kMiB),
              6.6 + 24 * 1.0 + 6 * 2.7 + kMiB / (20.4 * 16.0 / 30 * 1e3), 1e-9);
}

TEST(LibraryTuner, TreeHasLogarithmicNetworkLatencyAndNcclsSizeCorrection) {
  // 2 MiB: log2(2 MiB / 64) = 15, where NCCL corrects Simple's tree rate by 0.6; the tree
  // moves every byte up and down (x 0.5), at 0.92 of the NICs' 100 GB/s, and with a NIC for
  // each GPU NCCL's search settles on the simple tree pattern (x 0.85).
  EXPECT_NEAR(estimate_us(four_gh200_nodes(), LibraryAlgorithm::tree, Protocol::simple, 2 * kMiB),
              8.4 + 2 * (3 * 4.0 + 2 * 14) + 2 * kMiB / (100 * 0.92 * 0.85 * 0.6 * 0.5 * 1e3),
              1e-9);
  EXPECT_DOUBLE_EQ(tree_rate_correction(Protocol::simple, 2 * kMiB), 0.6);
  EXPECT_DOUBLE_EQ(tree_rate_correction(Protocol::ll, 512 * 1024), 0.4);
  EXPECT_DOUBLE_EQ(tree_rate_correction(Protocol::simple, 1024 * kMiB), 1.0);
}

TEST(LibraryTuner, TheTimesCorrectionIsNcclsAtPowersOfTwoAndSmoothBetween) {
  // NCCL's table: Simple 0.6 at 2 MiB, 0.7 at 4 MiB; 0.9 from 256 MiB, none from 512 MiB.
  EXPECT_DOUBLE_EQ(smooth_tree_rate_correction(Protocol::simple, 2 * kMiB), 0.6);
  EXPECT_NEAR(smooth_tree_rate_correction(Protocol::simple, 3 * kMiB), 0.6 + 0.1 * std::log2(1.5),
              1e-12);
  EXPECT_DOUBLE_EQ(smooth_tree_rate_correction(Protocol::simple, 512 * kMiB), 1.0);
  // So a buffer just below 512 MiB is not timed slower than one of 512 MiB.
  EXPECT_GT(smooth_tree_rate_correction(Protocol::simple, 500 * kMiB), 0.96);
  EXPECT_DOUBLE_EQ(tree_rate_correction(Protocol::simple, 500 * kMiB), 0.9);
}

TEST(LibraryTuner, BetweenTwoNodesTheTreesRateMayBeTwiceTheNics) {
  TunerGroup two_nodes = four_gh200_nodes();
  two_nodes.nodes = 2;
  two_nodes.ranks = 8;
  const double bytes = 4096 * kMiB;
  EXPECT_NEAR(estimate_us(two_nodes, LibraryAlgorithm::tree, Protocol::simple, bytes),
              8.4 + 2 * (3 * 4.0 + 14) + bytes / (200 * 0.92 * 0.85 * 0.5 * 1e3), 1e-9);
  // So the tree, not the ring (bound to the NICs), is NCCL's choice for large buffers there.
  EXPECT_LT(estimate_us(two_nodes, LibraryAlgorithm::tree, Protocol::simple, bytes),
            estimate_us(two_nodes, LibraryAlgorithm::ring, Protocol::simple, bytes));
}

TEST(LibraryTuner, TheSimpleTreePatternOnlyWhereEachGpuHasItsOwnNic) {
  // Two GPUs on one NIC let NCCL's search keep the balanced tree; so does Ampere, where the
  // search does not try the simple pattern; and one node has no network traffic to place.
  const double bytes = 1024 * kMiB;
  const double balanced_us = 8.4 + 2 * (3 * 4.0 + 2 * 14) + bytes / (100 * 0.92 * 0.5 * 1e3);
  TunerGroup shared_nics = four_gh200_nodes();
  shared_nics.nic_per_gpu = false;
  EXPECT_NEAR(estimate_us(shared_nics, LibraryAlgorithm::tree, Protocol::simple, bytes),
              balanced_us, 1e-9);
  TunerGroup ampere = four_gh200_nodes();
  ampere.generation = GpuGeneration::ampere;
  EXPECT_NEAR(estimate_us(ampere, LibraryAlgorithm::tree, Protocol::simple, bytes), balanced_us,
              1e-9);
  EXPECT_NEAR(estimate_us(four_gh200_nodes(), LibraryAlgorithm::tree, Protocol::simple, bytes),
              8.4 + 2 * (3 * 4.0 + 2 * 14) + bytes / (100 * 0.92 * 0.85 * 0.5 * 1e3), 1e-9);
}

TEST(LibraryTuner, NvlsHasOneChannelPerGpuAtItsCappedSpeed) {
  // 8 channels of min(450 / 9, 60) = 50 GB/s x nvlsEfficiency 0.85, after 25 us.
  EXPECT_NEAR(estimate_us(one_h100_node(), LibraryAlgorithm::nvls, Protocol::simple, kMiB),
              25 + kMiB / (8 * 50 * 0.85 * 1e3), 1e-9);
}

TEST(LibraryTuner, TheEstimateDecidesForNcclsCollectivesOnly) {
  EXPECT_TRUE(library_estimates(GpuGeneration::hopper, TimedOp::all_reduce));
  EXPECT_TRUE(library_estimates(GpuGeneration::ampere, TimedOp::reduce_scatter));
  EXPECT_FALSE(library_estimates(GpuGeneration::hopper, TimedOp::all_to_all));
  EXPECT_FALSE(library_estimates(GpuGeneration::cdna3, TimedOp::all_reduce));
}

}  // namespace
}  // namespace spmd::cost_model
