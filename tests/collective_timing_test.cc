// The protocol-level timing (cost_model/collective_timing.h): its closed forms on known
// fabrics, the automatic choice, forced choices and their fallbacks, and the laws every
// prediction obeys.
#include "cost_model/collective_timing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "cost_model/library_tuner.h"
#include "reference/error.h"
#include "tests/error_of.h"

namespace spmd::cost_model {
namespace {

using test_errors::error_of;

Fabric hgx_h100() {
  return {.generation = GpuGeneration::hopper,
          .host = HostKind::x86,
          .devices_per_node = 8,
          .scale_up = ScaleUpKind::nvswitch,
          .scale_up_bytes_per_s = 450'000'000'000,
          .in_switch_reduction = true,
          .nics_per_node = 8,
          .nic_bytes_per_s = 50'000'000'000,
          .network = NetworkKind::infiniband};
}

Fabric hgx_a100() {
  Fabric fabric = hgx_h100();
  fabric.generation = GpuGeneration::ampere;
  fabric.scale_up_bytes_per_s = 300'000'000'000;
  fabric.in_switch_reduction = false;
  return fabric;
}

// Nodes of 8 MI300X on a full xGMI mesh (448 GB/s a GPU), with 8 x 400 Gb/s RoCE NICs.
Fabric mi300x_roce() {
  Fabric fabric = hgx_h100();
  fabric.generation = GpuGeneration::cdna3;
  fabric.scale_up = ScaleUpKind::full_mesh;
  fabric.scale_up_bytes_per_s = 448'000'000'000;
  fabric.in_switch_reduction = false;
  fabric.network = NetworkKind::roce;
  return fabric;
}

// Nodes of 4 GH200 on a full NVLink mesh, each with its own 200 Gb/s Slingshot NIC.
Fabric gh200_slingshot() {
  Fabric fabric = hgx_h100();
  fabric.host = HostKind::grace;
  fabric.devices_per_node = 4;
  fabric.scale_up = ScaleUpKind::full_mesh;
  fabric.in_switch_reduction = false;
  fabric.nics_per_node = 4;
  fabric.nic_bytes_per_s = 25'000'000'000;
  fabric.network = NetworkKind::slingshot;
  return fabric;
}

double time_us(const Fabric& fabric, TimingRequest request) {
  return static_cast<double>(time_collective(fabric, request).time_ps) / 1e6;
}

// The time of an all-reduce forced to an algorithm and a protocol.
double forced_us(const Fabric& fabric, std::int64_t bytes, int ranks, LibraryAlgorithm algorithm,
                 Protocol protocol) {
  return time_us(fabric,
                 {.bytes = bytes, .ranks = ranks, .algorithm = algorithm, .protocol = protocol});
}

TEST(CollectiveTiming, SmallAllReduceIsTheGpusFixedPartPlusLowLatencyHops) {
  // 8 B on 8 A100: LL, 14 ring hops of 2 x 0.6 us after the GPU's fixed 2 x 11 us.
  const TimedChoice choice = time_collective(hgx_a100(), {.bytes = 8, .ranks = 8});
  EXPECT_EQ(choice.protocol, Protocol::ll);
  EXPECT_NEAR(static_cast<double>(choice.time_ps) / 1e6, 22.0 + 14 * 1.2, 0.01);
}

TEST(CollectiveTiming, TheX86HostsIssueIntervalHidesShortTransfers) {
  // On 8 H100 the GPU's 11 us and 14 LL hops of 0.6 us are shorter than the x86 host's 22 us
  // between two collectives, which then sets the time; a transfer longer than that shows.
  EXPECT_NEAR(time_us(hgx_h100(), {.bytes = 8, .ranks = 8}), 22.0, 0.01);
  EXPECT_NEAR(time_us(hgx_h100(), {.bytes = 64 << 10, .ranks = 8}), 22.0, 0.01);
  const TimingRequest large{.bytes = 1 << 20, .ranks = 8, .protocol = Protocol::ll};
  EXPECT_NEAR(time_us(hgx_h100(), large), 11.0 + 14 * 0.6 + (1 << 20) * 1.75 / 141e3, 0.01);
  // Grace hosts show no such interval: the GPU's 5.5 us plus the hops.
  Fabric grace = hgx_h100();
  grace.host = HostKind::grace;
  EXPECT_NEAR(time_us(grace, {.bytes = 8, .ranks = 8}), 5.5 + 14 * 0.6, 0.01);
}

// NVLS on 8 H100 with chunks of `chunk_bytes`: each GPU moves (1 + 1/8) of the buffer each way
// at 450 GB/s x 0.88, and every chunk costs one of the 16 channels a 1.5 us synchronization.
double nvls_on_8_h100_us(double bytes, double chunk_bytes) {
  return 31.0 + bytes / (450e3 * 0.88 * 8 / 9) + bytes * 1.5 / (16 * chunk_bytes);
}

TEST(CollectiveTiming, LargeAllReduceOnNvSwitchUsesNvlsAndItsRate) {
  const std::int64_t bytes = std::int64_t{8} << 30;
  const TimedChoice choice = time_collective(hgx_h100(), {.bytes = bytes, .ranks = 8});
  EXPECT_EQ(choice.label(), "nvls/Simple");
  // From 64 chunks per channel and GPU (1 GiB here) on, NCCL's NVLS chunk is its full 128 KiB.
  EXPECT_NEAR(static_cast<double>(choice.time_ps) / 1e6,
              nvls_on_8_h100_us(static_cast<double>(bytes), 131072), 0.01);
}

TEST(CollectiveTiming, NvlsChunksShrinkWithTheBufferAndSlowItDown) {
  // 16 channels x 8 GPUs = 128 chunks in flight: 64 KiB chunks below 64 x 128 x 128 KiB (1 GiB),
  // 32 KiB below 8 x 128 x 64 KiB (64 MiB), 16 KiB below 2 x 128 x 32 KiB (8 MiB).
  const auto nvls_us = [](std::int64_t bytes) {
    return time_us(hgx_h100(), {.bytes = bytes, .ranks = 8, .algorithm = LibraryAlgorithm::nvls});
  };
  EXPECT_NEAR(nvls_us(std::int64_t{512} << 20), nvls_on_8_h100_us(512.0 * (1 << 20), 65536), 0.01);
  EXPECT_NEAR(nvls_us(std::int64_t{32} << 20), nvls_on_8_h100_us(32.0 * (1 << 20), 32768), 0.01);
  EXPECT_NEAR(nvls_us(std::int64_t{4} << 20), nvls_on_8_h100_us(4.0 * (1 << 20), 16384), 0.01);
  // So the rate per byte rises with the buffer.
  EXPECT_GT(nvls_us(std::int64_t{4} << 20) / 4, nvls_us(std::int64_t{512} << 20) / 512);
}

TEST(CollectiveTiming, NvlsRunsOnTwoGpusWhenForcedButTheTunerKeepsTheRing) {
  // NCCL sets up NVLS from two GPUs on (src/transport/nvls.cc); each GPU's links then carry
  // 1 + 1/2 of the buffer each way, so NVLS is slower than a two-GPU ring, which moves it once.
  const std::int64_t bytes = std::int64_t{1} << 30;
  const TimedChoice forced =
      time_collective(hgx_h100(), {.bytes = bytes, .ranks = 2, .algorithm = LibraryAlgorithm::nvls});
  EXPECT_EQ(forced.label(), "nvls/Simple");
  EXPECT_EQ(forced.fallback, "");
  const TimedChoice chosen = time_collective(hgx_h100(), {.bytes = bytes, .ranks = 2});
  EXPECT_EQ(chosen.label(), "ring/Simple");
  EXPECT_GT(forced.time_ps, chosen.time_ps);
}

TEST(CollectiveTiming, LeftToItselfTheLibraryRunsNvlsWhereItsTunerPrefersIt) {
  // On 4 GPUs NCCL's estimate of NVLS (4 channels of at most 60 GB/s, x 0.85, after 25 us) is
  // beaten by its LL128 ring estimate (450 GB/s x 0.92 x 4/6, after 14 + 6 x 1.9 us) at every
  // size, so it runs a ring though NVLS would be faster; forced, NVLS runs.
  const std::int64_t bytes = std::int64_t{1} << 30;
  const TimedChoice chosen = time_collective(hgx_h100(), {.bytes = bytes, .ranks = 4});
  EXPECT_EQ(chosen.label(), "ring/Simple");
  const TimedChoice forced =
      time_collective(hgx_h100(), {.bytes = bytes, .ranks = 4, .algorithm = LibraryAlgorithm::nvls});
  EXPECT_EQ(forced.label(), "nvls/Simple");
  EXPECT_EQ(forced.fallback, "");
  EXPECT_LT(forced.time_ps, chosen.time_ps);
  // On 8 the NVLS estimate (8 channels of 50 GB/s x 0.85) wins from about 1 MiB on; below, LL's
  // lower latency wins.
  EXPECT_EQ(time_collective(hgx_h100(), {.bytes = bytes, .ranks = 8}).label(), "nvls/Simple");
  EXPECT_EQ(time_collective(hgx_h100(), {.bytes = 65536, .ranks = 8}).label(), "ring/LL");
}

TEST(CollectiveTiming, WhereItsTunerPrefersNvlsTheLibraryRunsItEvenIfARingWouldBeFaster) {
  // 8 GPUs of one NVLink domain with 900 GB/s links, as GB300 NVL72 (published: NCCL's default
  // runs NVLS at 4 MiB on 8-32 of them). NCCL's estimates: NVLS 25 us + 4 MiB / (8 x 90 GB/s x
  // 0.74); LL 6.6 + 14 x 0.6 us + 4 MiB / (282 GB/s x 8/14). Timed, LL is the faster here.
  Fabric nvl72 = hgx_h100();
  nvl72.generation = GpuGeneration::blackwell;
  nvl72.host = HostKind::grace;
  nvl72.devices_per_node = 72;
  nvl72.scale_up_bytes_per_s = 900'000'000'000;
  const TimingRequest request{.bytes = 4 << 20, .ranks = 8};
  const TimedChoice chosen = time_collective(nvl72, request);
  EXPECT_EQ(chosen.label(), "nvls/Simple");
  TimingRequest ll = request;
  ll.protocol = Protocol::ll;
  EXPECT_LT(time_collective(nvl72, ll).time_ps, chosen.time_ps);
}

TEST(CollectiveTiming, TheLibraryRunsWhatItsTunerEstimatesFastestNotWhatIsFastest) {
  // 2 nodes of 4 GH200: NCCL's estimates (src/graph/tuning.cc) keep the LL ring up to 1 MiB
  // (6.6 + 12 x 1 + 2 x 2.7 us, at min(39, 100 / 2) GB/s x 8/14) and take the tree with Simple
  // from 2 MiB (8.4 + 2 x (3 x 4 + 14) us, at min(450, 2 x 100) x 0.92 / 2 GB/s x 0.6, NCCL's
  // correction at 2 MiB), as the published runs on Alps switch between 1 and 2 MiB.
  const auto chosen = [](std::int64_t bytes) {
    return time_collective(gh200_slingshot(), {.bytes = bytes, .ranks = 8});
  };
  EXPECT_EQ(chosen(1 << 20).label(), "ring/LL");
  EXPECT_EQ(chosen(2 << 20).label(), "tree/Simple");
  // The LL ring over the network is the slower at 1 MiB; the library runs it all the same.
  const TimingRequest tree{.bytes = 1 << 20,
                           .ranks = 8,
                           .algorithm = LibraryAlgorithm::tree,
                           .protocol = Protocol::simple};
  EXPECT_LT(time_collective(gh200_slingshot(), tree).time_ps, chosen(1 << 20).time_ps);
}

TEST(CollectiveTiming, LargeAllReduceWithoutNvlsUsesTheRing) {
  const std::int64_t bytes = std::int64_t{1} << 30;
  const TimedChoice choice = time_collective(hgx_a100(), {.bytes = bytes, .ranks = 8});
  EXPECT_EQ(choice.label(), "ring/Simple");
  // Bus bytes 2(n-1)/n of the buffer at 300 GB/s * 0.76; A100's hops take twice Hopper's.
  EXPECT_NEAR(static_cast<double>(choice.time_ps) / 1e6,
              22.0 + 1.1 + 14 * 2 * 3.4 + static_cast<double>(bytes) * 1.75 / (300e3 * 0.76), 0.01);
}

TEST(CollectiveTiming, AcrossNodesTheRingRunsAtTheNodesNicRate) {
  // 4 nodes of 8 with 8 HDR NICs each: the bus rate is 8 x 25 GB/s x 0.93, below NVLink's
  // 450 x 0.76 = 342 GB/s; the ring crosses each node boundary twice.
  Fabric fabric = hgx_h100();
  fabric.nic_bytes_per_s = 25'000'000'000;
  const std::int64_t bytes = std::int64_t{4} << 30;
  TimingRequest request{.bytes = bytes, .ranks = 32, .algorithm = LibraryAlgorithm::ring};
  const double expected_us = 11.0 + 1.1 + (62 - 6) * 3.4 + 6 * 14.0 +
                             static_cast<double>(bytes) * 62 / 32 / (200e3 * 0.93);
  EXPECT_NEAR(time_us(fabric, request), expected_us, 0.01);
}

TEST(CollectiveTiming, AcrossNodesTheRingsScaleUpLinksCarryAllButTheNicsShare) {
  // 2 nodes of 8 MI300X: the ring leaves each node through the NICs, so a GPU's xGMI links carry
  // 7/8 of its sends and bound the bus at 448 x 0.705 x 8/7 = 361 GB/s, below the NICs'
  // 8 x 50 x 0.93 = 372 (inside one node they bound it at 316).
  const auto ring_us = [](std::int64_t bytes) {
    return forced_us(mi300x_roce(), bytes, 16, LibraryAlgorithm::ring, Protocol::simple);
  };
  const std::int64_t bytes = std::int64_t{4} << 30;
  EXPECT_NEAR(ring_us(2 * bytes) - ring_us(bytes),
              static_cast<double>(bytes) * 2 * 15 / 16 / (448e3 * 0.705 * 8 / 7), 0.01);
}

TEST(CollectiveTiming, RcclsNetworkHopsTakeItsTunersRatioToNcclsLonger) {
  // A tree of 4 nodes has one network level more each way than one of 2: two more hops, which
  // take 6.2 us with NCCL's LL and 10.5 / 5.0 times that with RCCL's.
  const auto tree_ll_us = [](const Fabric& fabric, int ranks) {
    return forced_us(fabric, 8, ranks, LibraryAlgorithm::tree, Protocol::ll);
  };
  Fabric h100_roce = hgx_h100();
  h100_roce.network = NetworkKind::roce;
  EXPECT_NEAR(tree_ll_us(h100_roce, 32) - tree_ll_us(h100_roce, 16), 2 * 6.2, 0.01);
  EXPECT_NEAR(tree_ll_us(mi300x_roce(), 32) - tree_ll_us(mi300x_roce(), 16), 2 * 6.2 * 2.1, 0.01);
}

TEST(CollectiveTiming, BetweenTwoNodesTheTreeSendsEachByteThroughTheNicsOnceEachWay) {
  // 2 nodes of 8 A100 with 8 x 12.5 GB/s NICs: the NICs (93 GB/s) are slower than the chain
  // inside a node (300 x 0.76 / 2 = 114 GB/s), so the tree moves the buffer at the NICs' rate,
  // where the ring moves 2 (n - 1) / n of it. NCCL's tuner agrees: its tree search may take up to
  // twice the NICs' rate inside the node (200 GB/s x 0.92 / 2 = 92 GB/s), the ring's 53.
  Fabric fabric = hgx_a100();
  fabric.nic_bytes_per_s = 12'500'000'000;
  const std::int64_t bytes = std::int64_t{1} << 30;
  const TimedChoice choice = time_collective(fabric, {.bytes = bytes, .ranks = 16});
  EXPECT_EQ(choice.label(), "tree/Simple");
  // One network level, which the first chunk (NCCL's 512 KiB Simple step) crosses at 15 GB/s.
  const double fill_us = 524288 / 15e3;
  EXPECT_NEAR(
      static_cast<double>(choice.time_ps) / 1e6,
      22.0 + 1.1 + 2 * (7 * 2 * 3.4 + 14.0) + static_cast<double>(bytes) / (100e3 * 0.93) + fill_us,
      0.01);
  // With NICs faster than the chain, the chain sets the rate.
  fabric.nic_bytes_per_s = 50'000'000'000;
  const TimingRequest tree{.bytes = bytes, .ranks = 16, .algorithm = LibraryAlgorithm::tree};
  EXPECT_NEAR(time_us(fabric, tree),
              22.0 + 1.1 + 2 * (7 * 2 * 3.4 + 14.0) +
                  static_cast<double>(bytes) / (300e3 * 0.76 * 0.5) + fill_us,
              0.01);
}

TEST(CollectiveTiming, AcrossMoreNodesTheTreeSendsEachByteThroughTheNicsTwiceEachWay) {
  // 4 nodes: a double binary tree sends each byte up one tree and down the other, half the bus
  // rate (8 x 25 GB/s x 0.93 here), as NCCL's tuner assumes; 3 network levels to fill.
  Fabric fabric = hgx_h100();
  fabric.nic_bytes_per_s = 25'000'000'000;
  const std::int64_t bytes = std::int64_t{1} << 30;
  const double fill_us = 3 * 524288 / 15e3;
  const TimingRequest tree{.bytes = bytes,
                           .ranks = 32,
                           .algorithm = LibraryAlgorithm::tree,
                           .protocol = Protocol::simple};
  EXPECT_NEAR(time_us(fabric, tree),
              11.0 + 1.1 + 2 * (7 * 3.4 + 2 * 14.0) +
                  static_cast<double>(bytes) / (200e3 * 0.93 * 0.5) + fill_us,
              0.01);
  // Over Slingshot the published trees reach 0.7 of that (the NICs: 4 x 25 GB/s x 0.93), and
  // the first chunk crosses each level at 5.4 GB/s.
  const TimingRequest slingshot_tree{.bytes = bytes,
                                     .ranks = 16,
                                     .algorithm = LibraryAlgorithm::tree,
                                     .protocol = Protocol::simple};
  EXPECT_NEAR(time_us(gh200_slingshot(), slingshot_tree),
              5.5 + 1.1 + 2 * (3 * 3.4 + 2 * 9.0) +
                  static_cast<double>(bytes) / (100e3 * 0.93 * 0.35) + 3 * 524288 / 5.4e3,
              0.01);
}

TEST(CollectiveTiming, ATreesFirstChunkAcrossNodesGrowsWithTheBufferUpToNcclsStep) {
  // Each of the tree's 16 channels pipelines its share of the buffer: the chunk that fills the
  // 3 network levels of 4 GH200 nodes is 128 KiB up to 2 MiB, the buffer's sixteenth up to
  // 8 MiB, then NCCL's 512 KiB Simple step.
  const auto fill_us = [](std::int64_t bytes) {
    return forced_us(gh200_slingshot(), bytes, 16, LibraryAlgorithm::tree, Protocol::simple) - 5.5 -
           1.1 - 2 * (3 * 3.4 + 2 * 9.0) - static_cast<double>(bytes) / (100e3 * 0.93 * 0.35);
  };
  EXPECT_NEAR(fill_us(std::int64_t{1} << 20), 3 * 131072 / 5.4e3, 0.01);
  EXPECT_NEAR(fill_us(std::int64_t{1} << 21), 3 * 131072 / 5.4e3, 0.01);
  EXPECT_NEAR(fill_us(std::int64_t{1} << 22), 3 * 262144 / 5.4e3, 0.01);
  EXPECT_NEAR(fill_us(std::int64_t{1} << 23), 3 * 524288 / 5.4e3, 0.01);
  EXPECT_NEAR(fill_us(std::int64_t{1} << 30), 3 * 524288 / 5.4e3, 0.01);
}

TEST(CollectiveTiming, LowLatencyAcrossNodesRunsAtItsNetworkPathsRate) {
  // LL across nodes moves a node's bytes at its network path's rate: 1.6 GB/s through Slingshot's
  // CXI provider, 20 GB/s over verbs. A tree uses the path as often as a ring, half the bus rate,
  // not Slingshot's share of its NICs; its first 10 KiB chunk fills 2 * depth - 1 levels.
  const std::int64_t bytes = 1 << 20;
  const TimingRequest tree{
      .bytes = bytes, .ranks = 16, .algorithm = LibraryAlgorithm::tree, .protocol = Protocol::ll};
  EXPECT_NEAR(time_us(gh200_slingshot(), tree),
              5.5 + 2 * (3 * 0.6 + 2 * 6.2) + static_cast<double>(bytes) / (1.6e3 * 0.5) +
                  3 * 10240 / 0.56e3,
              0.01);
  // Two nodes of 8 H100 over InfiniBand: one exchange, each byte crossing once each way.
  EXPECT_NEAR(time_us(hgx_h100(), tree),
              11.0 + 2 * (7 * 0.6 + 6.2) + static_cast<double>(bytes) / 20e3 + 10240 / 8e3, 0.01);
}

TEST(CollectiveTiming, TheNetworksHopSetsTheFloorAcrossNodes) {
  // A network hop costs 6.2 us with LL over verbs, 40 us over EFA and 55 us over TCPX(O): a
  // proxy's round trip through libfabric's SRD or the host's TCP stack. A two-node tree crosses
  // the network once up and once down.
  const TimingRequest small{
      .bytes = 8, .ranks = 16, .algorithm = LibraryAlgorithm::tree, .protocol = Protocol::ll};
  Fabric efa = hgx_h100();
  efa.network = NetworkKind::efa;
  Fabric tcp = hgx_h100();
  tcp.network = NetworkKind::ethernet;
  const double infiniband_us = time_us(hgx_h100(), small);
  EXPECT_NEAR(time_us(efa, small) - infiniband_us, 2 * (40.0 - 6.2), 0.01);
  EXPECT_NEAR(time_us(tcp, small) - infiniband_us, 2 * (55.0 - 6.2), 0.01);
}

TEST(CollectiveTiming, ForcedChoicesAreHonouredOrFallBackWithANote) {
  TimingRequest request{.bytes = 1 << 20, .ranks = 8, .protocol = Protocol::ll128};
  EXPECT_EQ(time_collective(hgx_h100(), request).protocol, Protocol::ll128);
  request.algorithm = LibraryAlgorithm::nvls;
  const TimedChoice fallback = time_collective(hgx_a100(), request);
  EXPECT_NE(fallback.algorithm, LibraryAlgorithm::nvls);
  EXPECT_THAT(fallback.fallback, testing::HasSubstr("nvls/LL128 cannot run all_reduce of 8 ranks"));
  request.algorithm = LibraryAlgorithm::ring;
  EXPECT_EQ(time_collective(hgx_h100(), request).fallback, "");
}

TEST(CollectiveTiming, NvlsTreeAcrossTwoNodesRunsAtTheSlowerOfNvlsAndTheNics) {
  // 2 nodes of 8 H100 with 8 x 50 GB/s NICs: NVLS in 128 KiB chunks over NCCL's 16 channels,
  // each chunk taking a 1.5 us round in the switches and a 0.9 us one through the network, gives
  // 1 / (1 / (450 x 0.88 x 8/9) + 2.4 us / (16 x 128 KiB)) = 250 GB/s, the NICs
  // 8 x 50 x 0.93 = 372 GB/s, each byte crossing them once each way between two nodes.
  const std::int64_t bytes = std::int64_t{1} << 30;
  const TimedChoice choice = time_collective(hgx_h100(), {.bytes = bytes, .ranks = 16});
  EXPECT_EQ(choice.label(), "nvlstree/Simple");
  // The fill: each of the tree's 16 channels' first 128 KiB chunk crosses the switch's
  // reduction, one network level and the switch's broadcast at 1/16 of its GPU's NIC.
  const double channel_gbps = 50 * 0.93 / 16;
  EXPECT_NEAR(
      static_cast<double>(choice.time_ps) / 1e6,
      31.0 + 2 * 14.0 + nvls_on_8_h100_us(static_cast<double>(bytes), 131072) - 31.0 +
          static_cast<double>(bytes) * 0.9 / (16 * 131072) + 3 * 131072 / (channel_gbps * 1e3),
      0.01);
  // Deeper trees send each byte up and down: half the NICs' rate, here below NVLS's. From four
  // nodes on the chunk is 64 KiB, and it crosses 2 + (2 x 3 - 1) stages on eight nodes.
  Fabric slow_nics = hgx_h100();
  slow_nics.nic_bytes_per_s = 25'000'000'000;
  const TimingRequest deep{.bytes = bytes, .ranks = 64, .algorithm = LibraryAlgorithm::nvlstree};
  EXPECT_NEAR(time_us(slow_nics, deep),
              31.0 + 2 * 3 * 14.0 + static_cast<double>(bytes) / (200e3 * 0.93 * 0.5) +
                  7 * 65536 / (25 * 0.93 / 16 * 1e3),
              0.01);
  // A small buffer fills the pipeline with its share per channel and GPU: 1 MiB / (16 x 8).
  const TimingRequest small{.bytes = 1 << 20, .ranks = 16, .algorithm = LibraryAlgorithm::nvlstree};
  const TimingRequest smaller{.bytes = 1 << 19, .ranks = 16,
                              .algorithm = LibraryAlgorithm::nvlstree};
  const double small_fill_us = 3 * 8192 / (channel_gbps * 1e3);
  EXPECT_GT(time_us(hgx_h100(), small) - time_us(hgx_h100(), smaller), small_fill_us / 2);
}

TEST(CollectiveTiming, OverGpuDirectTcpNvlsTreeIsOffAsTheProvidersProfileSetsIt) {
  // The same 1 GiB over two H100 nodes: NVLS-tree over InfiniBand; over TCPX(O) the provider's
  // NCCL profile leaves NVLS off, so the tuner picks from the others and a forced NVLS-tree
  // falls back.
  const TimingRequest request{.bytes = std::int64_t{1} << 30, .ranks = 16};
  EXPECT_EQ(time_collective(hgx_h100(), request).algorithm, LibraryAlgorithm::nvlstree);
  Fabric tcp = hgx_h100();
  tcp.network = NetworkKind::ethernet;
  EXPECT_NE(time_collective(tcp, request).algorithm, LibraryAlgorithm::nvlstree);
  TimingRequest forced = request;
  forced.algorithm = LibraryAlgorithm::nvlstree;
  EXPECT_NE(time_collective(tcp, forced).fallback, "");
}

TEST(CollectiveTiming, PatRunsAllGatherWithOneGpuPerNode) {
  Fabric one_per_node = hgx_h100();
  one_per_node.devices_per_node = 1;
  one_per_node.nics_per_node = 1;
  const TimingRequest request{.op = TimedOp::all_gather, .bytes = 1 << 20, .ranks = 64,
                              .algorithm = LibraryAlgorithm::pat};
  const TimedChoice choice = time_collective(one_per_node, request);
  EXPECT_EQ(choice.label(), "pat/Simple");
  // NCCL's PAT model: log2(64) levels at a network hop / 3.5, 2.8 us per rank, 0.75 of the
  // ring's bus rate (one 50 GB/s NIC at 0.93).
  EXPECT_NEAR(static_cast<double>(choice.time_ps) / 1e6,
              11.0 + 1.1 + 6 * 14.0 / 3.5 + 2.8 * 64 + (1 << 20) * 63.0 / 64 / (50e3 * 0.93 * 0.75),
              0.01);
  // With 8 GPUs per node NCCL does not run PAT.
  EXPECT_THAT(time_collective(hgx_h100(), {.op = TimedOp::all_gather, .bytes = 1 << 20,
                                           .ranks = 64, .algorithm = LibraryAlgorithm::pat})
                  .fallback,
              testing::HasSubstr("pat cannot run all_gather of 64 ranks"));
}

TEST(CollectiveTiming, CollNetRunsOnlyWhereTheNetworkReduces) {
  const TimingRequest request{.bytes = std::int64_t{1} << 30, .ranks = 32,
                              .algorithm = LibraryAlgorithm::collnet};
  Fabric fabric = hgx_a100();
  EXPECT_THAT(time_collective(fabric, request).fallback,
              testing::HasSubstr("collnet cannot run all_reduce of 32 ranks"));
  fabric.in_network_reduction = true;
  const TimedChoice choice = time_collective(fabric, request);
  EXPECT_EQ(choice.label(), "collnet/Simple");
  // Inside the node 2 x 7/8 of the buffer at 300 x 0.76 GB/s; the NICs carry it once at 8 x 50
  // x 0.93 GB/s: the node is slower. NCCL's 0.85 of that rate, 0.4 us per local rank.
  const double bytes = static_cast<double>(request.bytes);
  EXPECT_NEAR(
      static_cast<double>(choice.time_ps) / 1e6,
      22.0 + 1.1 + 2 * (2 * 3.4 + 7 * 0.4) + 2 * 14.0 + bytes * 2 * 7 / 8 / (300e3 * 0.76) / 0.85,
      0.01);
}

TEST(CollectiveTiming, AGroupWithOneRankPerNodeHasItsOwnGpusNics) {
  // The data-parallel groups of 8 nodes x 8 GPUs: 8 groups of 8 ranks, one on each node, run at
  // once, so each has one GPU's NIC per node (50 GB/s x 0.93), not the node's eight, and no
  // NVLink step.
  const std::int64_t bytes = std::int64_t{1} << 30;
  const TimingRequest spread{.bytes = bytes, .ranks = 8, .ranks_per_node = 1,
                             .algorithm = LibraryAlgorithm::ring, .protocol = Protocol::simple};
  EXPECT_NEAR(time_us(hgx_h100(), spread),
              11.0 + 1.1 + 14 * 14.0 + static_cast<double>(bytes) * 14 / 8 / (50e3 * 0.93), 0.01);
  // Consecutive (the default) the same 8 ranks are one node on NVLink.
  TimingRequest consecutive = spread;
  consecutive.ranks_per_node = 0;
  EXPECT_NEAR(time_us(hgx_h100(), consecutive),
              11.0 + 1.1 + 14 * 3.4 + static_cast<double>(bytes) * 14 / 8 / (450e3 * 0.76), 0.01);
  // Whole nodes given explicitly are the same as consecutive ones.
  TimingRequest whole_nodes{.bytes = bytes, .ranks = 32, .ranks_per_node = 8};
  EXPECT_EQ(time_collective(hgx_h100(), whole_nodes).time_ps,
            time_collective(hgx_h100(), {.bytes = bytes, .ranks = 32}).time_ps);
}

TEST(CollectiveTiming, AGroupOnPartOfAFullMeshUsesOnlyTheLinksToItsPeers) {
  Fabric mesh = hgx_h100();
  mesh.generation = GpuGeneration::cdna3;
  mesh.scale_up = ScaleUpKind::full_mesh;
  mesh.scale_up_bytes_per_s = 448'000'000'000;  // 7 links of 64 GB/s
  mesh.in_switch_reduction = false;
  const std::int64_t bytes = std::int64_t{1} << 30;
  const TimingRequest four{.bytes = bytes, .ranks = 4, .ranks_per_node = 4,
                           .algorithm = LibraryAlgorithm::ring, .protocol = Protocol::simple};
  // 3 of the 7 links, at xGMI's 0.705; RCCL's launch 7.1 us.
  EXPECT_NEAR(time_us(mesh, four),
              7.1 + 1.1 + 6 * 3.8 + static_cast<double>(bytes) * 6 / 4 / (448e3 * 0.705 * 3 / 7),
              0.01);
}

TEST(CollectiveTiming, RcclRunsMscclsAllPairsOnEightMi300xWhereItsChunksAreWholeElements) {
  // 8 MI300X: MSCCL's all-pairs takes two steps, 3.0 us with LL below 512 KiB (at LL's 120 GB/s
  // cap) and 5.3 us with Simple from there (at 0.716 of the mesh's 448 GB/s x 0.705), each GPU
  // moving 2 x 7/8 of the buffer.
  const auto auto_choice = [](std::int64_t bytes, int element_bytes = 4) {
    return time_collective(mi300x_roce(),
                           {.bytes = bytes, .ranks = 8, .element_bytes = element_bytes});
  };
  const TimedChoice small = auto_choice(64 << 10);
  EXPECT_EQ(small.label(), "allpairs/LL");
  EXPECT_NEAR(static_cast<double>(small.time_ps) / 1e6,
              7.1 + 2 * 3.0 + static_cast<double>(64 << 10) * 14 / 8 / 120e3, 0.01);
  const TimedChoice large = auto_choice(4 << 20);
  EXPECT_EQ(large.label(), "allpairs/Simple");
  EXPECT_NEAR(static_cast<double>(large.time_ps) / 1e6,
              7.1 + 1.1 + 2 * 5.3 + static_cast<double>(4 << 20) * 14 / 8 / (448e3 * 0.705 * 0.716),
              0.01);
  // The schedule cuts the buffer into 256 chunks: 512 floats are not, 512 halves are; beyond
  // 16 MiB, on other GPU counts and on other generations RCCL's own ring or tree runs.
  EXPECT_EQ(auto_choice(512).algorithm, LibraryAlgorithm::ring);
  EXPECT_EQ(auto_choice(512, 2).algorithm, LibraryAlgorithm::allpairs);
  EXPECT_NE(auto_choice(32 << 20).algorithm, LibraryAlgorithm::allpairs);
  EXPECT_NE(time_collective(mi300x_roce(), {.bytes = 1 << 20, .ranks = 4}).algorithm,
            LibraryAlgorithm::allpairs);
  Fabric mi355x = mi300x_roce();
  mi355x.generation = GpuGeneration::cdna4;
  EXPECT_NE(time_collective(mi355x, {.bytes = 1 << 20, .ranks = 8}).algorithm,
            LibraryAlgorithm::allpairs);
  // A forced algorithm wins over MSCCL, as NCCL_ALGO does.
  EXPECT_EQ(time_collective(mi300x_roce(),
                            {.bytes = 1 << 20, .ranks = 8, .algorithm = LibraryAlgorithm::ring})
                .algorithm,
            LibraryAlgorithm::ring);
}

TEST(CollectiveTiming, UnderGraphLaunchRcclRunsMscclppOnMultiplesOf32BytesUpTo1MiB) {
  // rccl-tests -G 1 on 8 MI300X: inside graph capture MSCCL++ takes an all-reduce of any
  // non-zero multiple of 32 bytes up to 1 MiB, timed as the all-pairs exchange (1.5 us launch).
  Fabric graph = mi300x_roce();
  graph.graph_launch = true;
  const auto choice = [&](const Fabric& fabric, std::int64_t bytes) {
    return time_collective(fabric, {.bytes = bytes, .ranks = 8, .element_bytes = 4});
  };
  const TimedChoice tiny = choice(graph, 64);
  EXPECT_EQ(tiny.label(), "allpairs/LL");
  EXPECT_NEAR(static_cast<double>(tiny.time_ps) / 1e6, 1.5 + 2 * 3.0 + 64.0 * 14 / 8 / 120e3, 0.01);
  // 16 bytes are no multiple of 32; without the graph 64 bytes are no whole 256 chunks.
  EXPECT_EQ(choice(graph, 16).algorithm, LibraryAlgorithm::ring);
  EXPECT_EQ(choice(mi300x_roce(), 64).algorithm, LibraryAlgorithm::ring);
  // Beyond MSCCL++'s 1 MiB, MSCCL's own rule holds: 256 whole chunks up to 16 MiB.
  EXPECT_EQ(choice(graph, (1 << 20) + 32).algorithm, LibraryAlgorithm::ring);
  EXPECT_EQ(choice(graph, 2 << 20).algorithm, LibraryAlgorithm::allpairs);
}

TEST(CollectiveTiming, OneRcclProcessDrivingEveryGpuRunsNoMscclAndLaunchesThemOneByOne) {
  // rccl-tests -g 8: MSCCL refuses a communicator with several GPUs in one process, so RCCL's
  // ring runs, and ROCm launches the eight kernels one after another: 3.7 us for each GPU after
  // the first, whatever the size.
  Fabric one_process = mi300x_roce();
  one_process.gpus_per_process = 8;
  for (const std::int64_t bytes : {std::int64_t{4} << 10, std::int64_t{4} << 20}) {
    const TimedChoice per_gpu = time_collective(
        mi300x_roce(), {.bytes = bytes, .ranks = 8, .algorithm = LibraryAlgorithm::ring});
    const TimedChoice shared = time_collective(one_process, {.bytes = bytes, .ranks = 8});
    EXPECT_EQ(shared.algorithm, LibraryAlgorithm::ring);
    EXPECT_EQ(shared.protocol, per_gpu.protocol);
    EXPECT_NEAR(static_cast<double>(shared.time_ps - per_gpu.time_ps) / 1e6, 7 * 3.7, 0.01);
  }
  // A group of two of the process's GPUs launches two kernels.
  const auto two_us = [](const Fabric& fabric) {
    return time_us(fabric, {.bytes = 4096, .ranks = 2, .ranks_per_node = 2});
  };
  EXPECT_NEAR(two_us(one_process) - two_us(mi300x_roce()), 3.7, 0.01);
}

TEST(CollectiveTiming, AGraphLaunchSkipsTheHostsPartOfEveryCollective) {
  // AMD: the GPU's fixed part falls from 7.1 to 1.5 us, and a single process's launches are
  // replayed together.
  const TimingRequest small{.bytes = 4096, .ranks = 8};
  Fabric graph = mi300x_roce();
  graph.graph_launch = true;
  EXPECT_NEAR(time_us(mi300x_roce(), small) - time_us(graph, small), 7.1 - 1.5, 0.01);
  Fabric graph_one_process = graph;
  graph_one_process.gpus_per_process = 8;
  const TimingRequest ring{.bytes = 4096, .ranks = 8, .algorithm = LibraryAlgorithm::ring};
  EXPECT_NEAR(time_us(graph_one_process, ring), time_us(graph, ring), 0.01);
  // NVIDIA on x86: the host's 22 us interval between two collectives goes; the GPU's part stays.
  const TimingRequest four{.bytes = 8, .ranks = 4};
  Fabric h100_graph = hgx_h100();
  h100_graph.graph_launch = true;
  EXPECT_NEAR(time_us(hgx_h100(), four), 22.0, 0.01);
  EXPECT_NEAR(time_us(h100_graph, four), 11.0 + 6 * 0.6, 0.01);
}

TEST(CollectiveTiming, InsideANodeTheTreeTakesNcclsMediumSizeCorrection) {
  // 8 H100, a tree of 2 MiB with Simple: NCCL's treeCorrectionFactor there is 0.6, on the chain's
  // half of the bus rate (450 x 0.76 GB/s); at 1 GiB it is 1.
  const auto tree = [](std::int64_t bytes) {
    return forced_us(hgx_h100(), bytes, 8, LibraryAlgorithm::tree, Protocol::simple);
  };
  const double hops_us = 1.1 + 2 * 7 * 3.4;
  EXPECT_NEAR(tree(2 << 20), 11.0 + hops_us + (2 << 20) / (450e3 * 0.76 * 0.5 * 0.6), 0.01);
  EXPECT_NEAR(tree(std::int64_t{1} << 30),
              11.0 + hops_us + static_cast<double>(std::int64_t{1} << 30) / (450e3 * 0.76 * 0.5),
              0.01);
}

TEST(CollectiveTiming, LowLatencyProtocolOverSlingshotIsNotLl128) {
  Fabric fabric = hgx_h100();
  fabric.network = NetworkKind::slingshot;
  for (const TimedChoice& choice : timed_choices(fabric, {.bytes = 1 << 20, .ranks = 16})) {
    EXPECT_NE(choice.protocol, Protocol::ll128) << choice.label();
  }
  EXPECT_FALSE(timed_choices(fabric, {.bytes = 1 << 20, .ranks = 8}).empty());
}

TEST(CollectiveTiming, BadRequestsAreErrors) {
  EXPECT_THAT(error_of([] { time_collective(hgx_h100(), {.bytes = 8, .ranks = 0}); }),
              testing::HasSubstr("0 ranks, expected at least 1"));
  Fabric one_box = hgx_h100();
  one_box.nics_per_node = 0;
  EXPECT_THAT(error_of([&] { time_collective(one_box, {.bytes = 8, .ranks = 16}); }),
              testing::HasSubstr("the fabric has no NICs"));
  EXPECT_THAT(error_of([] { protocol_from_name("LL256"); }),
              testing::HasSubstr("\"LL256\" is no protocol, expected LL, LL128 or Simple"));
  EXPECT_EQ(protocol_from_name("simple"), Protocol::simple);
}

// A machine's measured timing replaces the documented constants: a launch latency the GPU's
// fixed part, a Simple network hop every protocol's hop in proportion, and efficiencies the
// shares of the NICs' and scale-up links' rates. The library still chooses by its own estimate.
TEST(CollectiveTiming, MeasuredValuesReplaceTheDocumentedConstants) {
  Fabric grace = gh200_slingshot();
  const DocumentedTiming documented = documented_timing(grace);
  EXPECT_EQ(documented.launch_latency_ps, 5'500'000);
  EXPECT_EQ(documented.network_latency_ps, 9'000'000);
  EXPECT_DOUBLE_EQ(documented.network_efficiency, 0.93);
  EXPECT_DOUBLE_EQ(documented.scale_up_efficiency, 0.76);
  const TimingRequest small{.bytes = 8, .ranks = 4};
  const TimedChoice before = time_collective(grace, small);
  grace.measured.launch_latency_ps = 105'500'000;
  const TimedChoice after = time_collective(grace, small);
  EXPECT_EQ(after.label(), before.label());
  EXPECT_EQ(after.time_ps - before.time_ps, 100'000'000);
  // Two nodes of GH200, LL ring across them: 2 network hops of 6.2 us each at the documented
  // 9 us Simple hop; a measured 18 us Simple hop doubles them.
  Fabric two_nodes = gh200_slingshot();
  const TimingRequest ring_ll{
      .bytes = 8, .ranks = 8, .algorithm = LibraryAlgorithm::ring, .protocol = Protocol::ll};
  const double documented_us = time_us(two_nodes, ring_ll);
  two_nodes.measured.network_latency_ps = 18'000'000;
  EXPECT_NEAR(time_us(two_nodes, ring_ll) - documented_us, 2 * 6.2, 1e-6);
  // A ring of 1 GiB across two nodes is bound by the NICs (8 x 50 GB/s at 0.93): at half that
  // efficiency its transfer of 2 x 15/16 of the buffer takes as long again.
  Fabric halved = hgx_h100();
  const TimingRequest ring_large{.bytes = std::int64_t{1} << 30,
                                 .ranks = 16,
                                 .algorithm = LibraryAlgorithm::ring,
                                 .protocol = Protocol::simple};
  const double full_us = time_us(halved, ring_large);
  halved.measured.network_efficiency = 0.465;
  EXPECT_NEAR(time_us(halved, ring_large) - full_us, 2 * 15.0 / 16 * (1 << 30) / (400e3 * 0.93),
              0.01);
  halved.measured.scale_up_efficiency = 1.5;
  EXPECT_THAT(
      error_of([&] { time_collective(halved, ring_large); }),
      testing::HasSubstr("measured scale_up_efficiency 1.5, expected above 0 and at most 1"));
}

// Law: a machine whose measured values are the documented ones times every collective as one
// with none measured.
RC_GTEST_PROP(CollectiveTimingLaws, MeasuredValuesEqualToTheDocumentedOnesChangeNothing, ()) {
  const Fabric fabric = *rc::gen::element(hgx_h100(), hgx_a100(), mi300x_roce(), gh200_slingshot());
  const TimingRequest request{.op = *rc::gen::element(TimedOp::all_reduce, TimedOp::all_gather,
                                                      TimedOp::reduce_scatter, TimedOp::all_to_all),
                              .bytes = *rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 34),
                              .ranks = *rc::gen::inRange(1, 300)};
  const DocumentedTiming documented = documented_timing(fabric);
  Fabric measured = fabric;
  measured.measured = {.launch_latency_ps = documented.launch_latency_ps,
                       .network_latency_ps = documented.network_latency_ps,
                       .network_efficiency = documented.network_efficiency,
                       .scale_up_efficiency = documented.scale_up_efficiency};
  const TimedChoice expected = time_collective(fabric, request);
  const TimedChoice actual = time_collective(measured, request);
  RC_ASSERT(actual.label() == expected.label());
  // The measured latencies are whole picoseconds; the documented constants need not be.
  RC_ASSERT(std::abs(actual.time_ps - expected.time_ps) <= 1);
}

// Laws: with its algorithm and protocol held, a collective never takes less time for more bytes
// (except NVLS, whose chunk NCCL doubles at thresholds of the buffer, so a slightly larger buffer
// can take less time); the library runs one of the candidates; and where NCCL's estimate does not
// decide (RCCL, and the ops NCCL's tuner has no model for), it runs the fastest.
RC_GTEST_PROP(CollectiveTimingLaws, EachChoiceTakesLongerForMoreBytesAndTheLibraryRunsOneOfThem,
              ()) {
  const auto op = *rc::gen::element(TimedOp::all_reduce, TimedOp::all_gather,
                                    TimedOp::reduce_scatter, TimedOp::broadcast,
                                    TimedOp::all_to_all, TimedOp::permute);
  const int ranks = *rc::gen::inRange(1, 300);
  const std::int64_t bytes = *rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 36);
  const std::int64_t more = bytes + *rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 30);
  const Fabric fabric = *rc::gen::element(hgx_h100(), hgx_a100(), mi300x_roce());
  const TimingRequest request{.op = op, .bytes = bytes, .ranks = ranks};
  const std::vector<TimedChoice> choices = timed_choices(fabric, request);
  for (const TimedChoice& choice : choices) {
    // NVLS's chunk doubles at thresholds; MSCCL's all-pairs covers only some sizes.
    if (choice.algorithm == LibraryAlgorithm::nvls ||
        choice.algorithm == LibraryAlgorithm::allpairs) {
      continue;
    }
    const TimingRequest larger{.op = op, .bytes = more, .ranks = ranks,
                               .algorithm = choice.algorithm, .protocol = choice.protocol};
    RC_ASSERT(time_collective(fabric, larger).time_ps >= choice.time_ps);
  }
  const TimedChoice chosen = time_collective(fabric, request);
  RC_ASSERT(std::any_of(choices.begin(), choices.end(), [&](const TimedChoice& choice) {
    return choice.label() == chosen.label() && choice.time_ps == chosen.time_ps;
  }));
  if (library_estimates(fabric.generation, op) || chosen.algorithm == LibraryAlgorithm::allpairs) {
    return;
  }
  for (const TimedChoice& other : choices) RC_ASSERT(chosen.time_ps <= other.time_ps);
}

// Law: on eight MI300X, RCCL runs MSCCL's all-pairs for an all-reduce exactly where the schedule's
// 256 chunks are whole elements and the buffer is at most 16 MiB, LL below 512 KiB.
RC_GTEST_PROP(CollectiveTimingLaws, AllPairsRunsExactlyWhereItsChunksAreWholeElements, ()) {
  const int element_bytes = *rc::gen::element(1, 2, 4, 8);
  // Whole multiples of 256 elements half the time, else 1 to 255 over.
  const std::int64_t elements = *rc::gen::inRange<std::int64_t>(0, 1 << 15) * 256 +
                                *rc::gen::element<std::int64_t>(0, 0, 0, 1, 128, 255);
  RC_PRE(elements > 0);
  const std::int64_t bytes = elements * element_bytes;
  const TimedChoice chosen =
      time_collective(mi300x_roce(), {.bytes = bytes, .ranks = 8, .element_bytes = element_bytes});
  const bool applies = elements % 256 == 0 && bytes <= (16 << 20);
  RC_ASSERT((chosen.algorithm == LibraryAlgorithm::allpairs) == applies);
  if (applies) RC_ASSERT((chosen.protocol == Protocol::ll) == (bytes < (512 << 10)));
}

}  // namespace
}  // namespace spmd::cost_model
