// Reading calibration rows for `spmdsim validate` (validation/calibration_row.h,
// validation/calibration_machine.h, validation/error_summary.h): the measured time from whichever
// figure a row gives, forced algorithms and protocols from the nccl_algo / nccl_proto texts, the
// machine from its description, and the error statistics, as docs/validation.md defines them.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "error_of.h"
#include "published_calibration.h"
#include "support/csv_table.h"
#include "validation/calibration_machine.h"
#include "validation/calibration_row.h"
#include "validation/error_summary.h"

namespace spmd {
namespace {

using cost_model::Fabric;
using cost_model::LibraryAlgorithm;
using cost_model::NetworkKind;
using cost_model::Protocol;
using cost_model::TimedOp;
using test_errors::error_of;

constexpr std::int64_t kGbps = 125'000'000;  // 1 Gb/s in bytes/s

// ---- Ops and measured times

TEST(CalibrationOp, TakesNcclTestsNamesWithOrWithoutUnderscores) {
  EXPECT_EQ(calibration_op("all_reduce"), TimedOp::all_reduce);
  EXPECT_EQ(calibration_op("AllReduce"), TimedOp::all_reduce);
  EXPECT_EQ(calibration_op("all_gather"), TimedOp::all_gather);
  EXPECT_EQ(calibration_op("reduce_scatter"), TimedOp::reduce_scatter);
  EXPECT_EQ(calibration_op("broadcast"), TimedOp::broadcast);
  EXPECT_EQ(calibration_op("alltoall"), TimedOp::all_to_all);
  EXPECT_EQ(calibration_op("all_to_all"), TimedOp::all_to_all);
  EXPECT_EQ(calibration_op("all-reduce"), TimedOp::all_reduce);
  EXPECT_EQ(calibration_op("all_gather_perf"), TimedOp::all_gather);
  // reduce runs broadcast's ring the other way; sendrecv is one send to a peer.
  EXPECT_EQ(calibration_op("reduce"), TimedOp::broadcast);
  EXPECT_EQ(calibration_op("sendrecv"), TimedOp::permute);
  EXPECT_EQ(calibration_op("gather"), std::nullopt);
  EXPECT_EQ(calibration_op("hypercube"), std::nullopt);
}

TEST(CalibrationLaunch, ReadsNcclTestsFlagsFromTheNotes) {
  const auto launch = [](std::string_view notes) {
    const CalibrationLaunch l = calibration_launch(notes);
    return std::pair{l.gpus_per_process, l.graph_launch};
  };
  EXPECT_EQ(launch(""), std::pair(1, false));
  EXPECT_EQ(launch("./build/all_reduce_perf -b 8 -e 8G -f 2 -g 8 -n 40"), std::pair(8, false));
  EXPECT_EQ(launch("single process -g 4 on host GPUs 2-5"), std::pair(4, false));
  EXPECT_EQ(launch("mpirun -np 8 all_reduce_perf -b 8 -e 16G -f 2 -g 1 -G 1"), std::pair(1, true));
  EXPECT_EQ(launch("nThread 1 nGpus 8 minBytes 8 ... graph: 1"), std::pair(8, true));
  EXPECT_EQ(launch("all_reduce_perf --ngpus=2 --cudagraph 1"), std::pair(2, true));
  // A graph count of 0 is no graph; "-g" inside a word or a path is no flag.
  EXPECT_EQ(launch("-g 1 -G 0, graph: 0"), std::pair(1, false));
  EXPECT_EQ(launch("tutorials/spinup-gpu-cluster.md; AI-benchmarking-guide"), std::pair(1, false));
}

TEST(CalibrationNvls, OffDisabledOrTheEnvVariableAtZeroTurnNvlsOff) {
  EXPECT_TRUE(nvls_turned_off("off"));
  EXPECT_TRUE(nvls_turned_off(" Off (algo forced to Ring)"));
  EXPECT_TRUE(nvls_turned_off("disabled"));
  EXPECT_TRUE(nvls_turned_off("off per the job script (NCCL_NVLS_ENABLE=0)"));
  EXPECT_TRUE(nvls_turned_off("set by the profile: nccl_nvls_enable=0"));
  EXPECT_FALSE(nvls_turned_off(""));
  EXPECT_FALSE(nvls_turned_off("on (NCCL_ALGO=NVLS forced)"));
  EXPECT_FALSE(nvls_turned_off("default (not forced; NCCL_NVLS_ENABLE not set)"));
  EXPECT_FALSE(nvls_turned_off("n/a (A100 has no NVLS)"));
  EXPECT_FALSE(nvls_turned_off("offline tuning"));
}

TEST(MeasuredTime, BusFactorsAreNcclTests) {
  // nccl-tests src/all_reduce.cu etc., getBw: 2(n-1)/n, (n-1)/n, 1.
  EXPECT_DOUBLE_EQ(bus_factor(TimedOp::all_reduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(TimedOp::all_gather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(TimedOp::reduce_scatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(TimedOp::all_to_all, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor(TimedOp::broadcast, 16), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(TimedOp::all_reduce, 1), 0.0);
}

TEST(MeasuredTime, TimeUsWinsThenAlgbwThenBusbw) {
  const std::int64_t gigabyte = 1'000'000'000;
  // 1e9 bytes at 100 GB/s algbw: 10 ms.
  EXPECT_EQ(
      measured_time_us(measured_figures("12.5", "100", "175"), TimedOp::all_reduce, 8, gigabyte),
      12.5);
  EXPECT_DOUBLE_EQ(
      *measured_time_us(measured_figures("", "100", "999"), TimedOp::all_reduce, 8, gigabyte),
      10'000.0);
  // busbw 175 GB/s of an all-reduce on 8 ranks is algbw 100 GB/s.
  EXPECT_DOUBLE_EQ(
      *measured_time_us(measured_figures("", "", "175"), TimedOp::all_reduce, 8, gigabyte),
      10'000.0);
  // all_gather on 8: factor 7/8, so busbw 87.5 is algbw 100.
  EXPECT_DOUBLE_EQ(
      *measured_time_us(measured_figures(" ", "", "87.5"), TimedOp::all_gather, 8, gigabyte),
      10'000.0);
  EXPECT_DOUBLE_EQ(
      *measured_time_us(measured_figures("", "", "100"), TimedOp::broadcast, 8, gigabyte),
      10'000.0);
  // A time written as not available leaves the bandwidths.
  EXPECT_DOUBLE_EQ(
      *measured_time_us(measured_figures("N/A", "100", ""), TimedOp::all_reduce, 8, gigabyte),
      10'000.0);
  EXPECT_DOUBLE_EQ(
      *measured_time_us(measured_figures(" - ", "n/a", "175"), TimedOp::all_reduce, 8, gigabyte),
      10'000.0);
}

TEST(MeasuredTime, RowsWithoutAUsableFigureHaveNone) {
  EXPECT_EQ(measured_time_us(measured_figures("", "", ""), TimedOp::all_reduce, 8, 1024),
            std::nullopt);
  // nccl-tests prints 0.00 GB/s for tiny sizes: no figure, not an infinite time.
  EXPECT_EQ(measured_time_us(measured_figures("", "0.00", "0.00"), TimedOp::all_reduce, 8, 8),
            std::nullopt);
  // busbw of an all-reduce on one rank is 0 whatever the time.
  EXPECT_EQ(measured_time_us(measured_figures("", "", "5"), TimedOp::all_reduce, 1, 8),
            std::nullopt);
}

TEST(MeasuredTime, FiguresThatAreNotNumbersOrNegativeAreErrors) {
  EXPECT_EQ(error_of([] { measured_figures("abc", "", ""); }),
            "time_us 'abc': expected a number of at least 0, or nothing");
  EXPECT_EQ(error_of([] { measured_figures("", "-3", ""); }),
            "algbw_GBps '-3': expected a number of at least 0, or nothing");
  EXPECT_EQ(error_of([] { measured_figures("", "", "1e999"); }),
            "busbw_GBps '1e999': expected a number of at least 0, or nothing");
}

// ---- Forced choices

TEST(ForcedChoice, AlgorithmNamesWithNotesForceThatAlgorithm) {
  EXPECT_EQ(forced_algorithm("Ring"), LibraryAlgorithm::ring);
  EXPECT_EQ(forced_algorithm("Ring (env)"), LibraryAlgorithm::ring);
  EXPECT_EQ(forced_algorithm("Tree (env)"), LibraryAlgorithm::tree);
  EXPECT_EQ(forced_algorithm("NVLS (env)"), LibraryAlgorithm::nvls);
  EXPECT_EQ(forced_algorithm("NVLS (set); log shows NVLS/LL128"), LibraryAlgorithm::nvls);
  EXPECT_EQ(forced_algorithm("Ring (set); log shows RING/LL"), LibraryAlgorithm::ring);
}

TEST(ForcedChoice, DefaultsRequestsAndEmptyForceNothing) {
  EXPECT_EQ(forced_algorithm(""), std::nullopt);
  EXPECT_EQ(forced_algorithm("default (nothing forced)"), std::nullopt);
  EXPECT_EQ(forced_algorithm("default (tuner arm)"), std::nullopt);
  EXPECT_EQ(forced_algorithm("default tuner; log shows TREE/LL"), std::nullopt);
  // Asked for on an A100, which has no NVLS: the source cannot say what ran.
  EXPECT_EQ(forced_algorithm("NVLS requested; what ran is unknown"), std::nullopt);
  for (const char* unforced : {"-", "not forced", "N/A", "none", "auto", "unset (tuner)"}) {
    EXPECT_EQ(forced_algorithm(unforced), std::nullopt) << unforced;
    EXPECT_EQ(forced_protocol(unforced, ""), std::nullopt) << unforced;
  }
}

TEST(ForcedChoice, NcclsOtherAlgorithmNamesForceTheirAlgorithm) {
  EXPECT_EQ(forced_algorithm("NVLSTree (env)"), LibraryAlgorithm::nvlstree);
  EXPECT_EQ(forced_algorithm("PAT"), LibraryAlgorithm::pat);
  EXPECT_EQ(forced_algorithm("CollNetDirect (env)"), LibraryAlgorithm::collnet);
  EXPECT_EQ(forced_algorithm("collnetchain"), LibraryAlgorithm::collnet);
}

TEST(ForcedChoice, AnAlgorithmTheModelDoesNotKnowIsAnError) {
  EXPECT_EQ(error_of([] { forced_algorithm("MSCCL (env)"); }),
            "nccl_algo 'MSCCL (env)': expected Ring, Tree, NVLS, NVLSTree, PAT or CollNet "
            "(optionally followed by a note such as '(env)'), 'default ...', '... requested ...' "
            "or nothing");
}

TEST(ForcedChoice, ProtocolNamesInAnyCaseForceThatProtocol) {
  EXPECT_EQ(forced_protocol("LL", "default (nothing forced)"), Protocol::ll);
  EXPECT_EQ(forced_protocol("LL128", "default (nothing forced)"), Protocol::ll128);
  EXPECT_EQ(forced_protocol("Simple", ""), Protocol::simple);
  EXPECT_EQ(forced_protocol("SIMPLE", "Ring (env)"), Protocol::simple);
  EXPECT_EQ(forced_protocol("", "Ring (env)"), std::nullopt);
  EXPECT_EQ(error_of([] { forced_protocol("LL64", ""); }),
            "nccl_proto 'LL64': expected LL, LL128 or Simple (optionally followed by a note), "
            "'default ...' or nothing");
}

TEST(ForcedChoice, AProtocolThatNcclsLogShowedIsNotForced) {
  EXPECT_EQ(forced_protocol("LL", "default tuner; log shows TREE/LL"), std::nullopt);
  EXPECT_EQ(forced_protocol("LL128", "NVLS (set); log shows NVLS/LL128"), std::nullopt);
}

// The published set beside the checkout (docs/validation.md), read where it lies rather than
// copied: every row reads with a measured time, every machine is inferred, and its nccl_algo /
// nccl_proto texts force what they say (the texts the examples above stand for).
TEST(PublishedSet, EveryRowReadsAndItsTextsForceWhatTheySay) {
  const std::string path = test_calibration::published_calibration_path();
  ASSERT_TRUE(std::filesystem::exists(path))
      << "missing " << path << ": the public calibration set is not beside this checkout";
  const CsvTable table = CsvTable::read_file(path);
  const std::vector<CalibrationRow> rows = read_calibration_rows(table);
  ASSERT_EQ(rows.size(), table.records().size());
  ASSERT_FALSE(rows.empty());
  std::map<LibraryAlgorithm, int> forced;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const CalibrationRow& row = rows[i];
    const std::string algo_text = ascii_lowercase(table.field(table.records()[i], "nccl_algo"));
    EXPECT_TRUE(row.not_predicted.empty()) << "line " << row.line << ": " << row.not_predicted;
    EXPECT_TRUE(row.measured_time_us.has_value()) << "line " << row.line;
    EXPECT_NO_THROW(calibration_machine(row.machine)) << "line " << row.line;
    if (algo_text.empty() || algo_text.starts_with("default") ||
        algo_text.find("requested") != std::string::npos) {
      EXPECT_EQ(row.forced_algorithm, std::nullopt) << "line " << row.line << ": " << algo_text;
    }
    if (algo_text.find("log shows") != std::string::npos) {
      EXPECT_EQ(row.forced_protocol, std::nullopt) << "line " << row.line << ": " << algo_text;
    }
    if (row.forced_algorithm) ++forced[*row.forced_algorithm];
  }
  // The set forces each algorithm somewhere, so each formula is tested on its own.
  EXPECT_GT(forced[LibraryAlgorithm::ring], 0);
  EXPECT_GT(forced[LibraryAlgorithm::tree], 0);
  EXPECT_GT(forced[LibraryAlgorithm::nvls], 0);
}

// ---- The machine from its description

TEST(CalibrationMachine, GpuNamesPickPresetsLongestNameFirst) {
  EXPECT_EQ(preset_for_gpu("NVIDIA H100 SXM5 80GB").preset, "hgx-h100");
  EXPECT_EQ(preset_for_gpu("nvidia h100").preset, "hgx-h100");
  EXPECT_EQ(error_of([] { preset_for_gpu("NVIDIA H100 PCIe"); }),
            "gpu 'NVIDIA H100 PCIe': a PCIe card, expected an SXM or OAM GPU (the presets' NVLink "
            "and xGMI boards)");
  EXPECT_NE(error_of([] { preset_for_gpu("NVIDIA H100 NVL"); }).find("a PCIe card"),
            std::string::npos);
  EXPECT_NE(error_of([] { preset_for_gpu("NVIDIA H200 NVL (141GB)"); }).find("a PCIe card"),
            std::string::npos);
  // The racks' NVL names a domain size.
  EXPECT_EQ(preset_for_gpu("NVIDIA GB200 NVL72").preset, "gb200-nvl72");
  EXPECT_EQ(preset_for_gpu("NVIDIA GH200 96GB Grace Hopper").preset, "gh200-quad");
  EXPECT_EQ(preset_for_gpu("NVIDIA H200 SXM 141GB").preset, "hgx-h200");
  EXPECT_EQ(preset_for_gpu("NVIDIA GB200").preset, "gb200-nvl72");
  EXPECT_EQ(preset_for_gpu("NVIDIA B200").preset, "hgx-b200");
  EXPECT_EQ(preset_for_gpu("NVIDIA GB300 NVL72").preset, "gb300-nvl72");
  EXPECT_TRUE(preset_for_gpu("NVIDIA GB300 NVL72").nvlink_domain_spans_nodes);
  EXPECT_FALSE(preset_for_gpu("NVIDIA B200").nvlink_domain_spans_nodes);
  EXPECT_EQ(preset_for_gpu("NVIDIA A100 SXM4 40GB").preset, "hgx-a100");
  EXPECT_EQ(preset_for_gpu("AMD Instinct MI300X OAM").preset, "mi300x");
  EXPECT_EQ(preset_for_gpu("Tesla V100-SXM2-32GB").preset, "dgx-1-v100");
  EXPECT_EQ(preset_for_gpu("Tesla V100-SXM3-32GB-H (DGX-2H)").preset, "dgx-2-v100");
  EXPECT_EQ(preset_for_gpu("AMD Instinct MI250X (Frontier)").preset, "mi250x");
  EXPECT_EQ(preset_for_gpu("AMD Instinct MI325X").preset, "mi325x");
  EXPECT_EQ(preset_for_gpu("AMD Instinct MI355X").preset, "mi355x");
  EXPECT_EQ(preset_for_gpu("AMD Instinct MI350X").preset, "mi350x");
  // GB300 holds B300: the rack in its own name, the 8-GPU board in the board's.
  EXPECT_EQ(preset_for_gpu("NVIDIA B300 SXM6 AC").preset, "hgx-b300");
  EXPECT_FALSE(preset_for_gpu("NVIDIA B300 SXM6 AC").nvlink_domain_spans_nodes);
  // H800: H100 with NVLink at 400 GB/s both ways.
  EXPECT_EQ(preset_for_gpu("NVIDIA H800 80GB").preset, "hgx-h100");
  EXPECT_EQ(preset_for_gpu("NVIDIA H800 80GB").scale_up_bytes_per_s, 200'000'000'000);
  // A800: A100 with NVLink at 400 GB/s both ways; H20: H100's board and NVLink, and H200 and
  // GH200 are not H20.
  EXPECT_EQ(preset_for_gpu("NVIDIA A800-SXM4-80GB").preset, "hgx-a100");
  EXPECT_EQ(preset_for_gpu("NVIDIA A800-SXM4-80GB").scale_up_bytes_per_s, 200'000'000'000);
  EXPECT_EQ(preset_for_gpu("NVIDIA H20").preset, "hgx-h100");
  EXPECT_EQ(preset_for_gpu("NVIDIA H20").scale_up_bytes_per_s, std::nullopt);
  EXPECT_EQ(preset_for_gpu("NVIDIA H200 SXM 141GB").preset, "hgx-h200");
}

TEST(CalibrationMachine, AnUnknownGpuIsAnErrorListingTheKnownNames) {
  EXPECT_EQ(error_of([] { preset_for_gpu("NVIDIA P100-SXM2"); }),
            "gpu 'NVIDIA P100-SXM2': expected a name holding one of GB300, GB200, GH200, MI355X, "
            "MI350X, MI325X, MI300X, B300, B200, H200, H800, H100, H20, A800, A100, DGX-2, SXM3, "
            "V100 or MI250 (the GPUs with presets)");
}

TEST(CalibrationMachine, NicTextGivesCountRateAndNetwork) {
  const std::optional<int> no_count;
  const std::vector<std::pair<std::string, NicDescription>> cases = {
      {"8x 400 Gb/s InfiniBand", {8, 400 * kGbps, NetworkKind::infiniband}},
      {"8 x 400G NDR", {8, 400 * kGbps, NetworkKind::infiniband}},
      {"ConnectX-7 NDR 400G", {no_count, 400 * kGbps, NetworkKind::infiniband}},
      {"4 x 200 Gb/s Slingshot", {4, 200 * kGbps, NetworkKind::slingshot}},
      {"16 x 100Gbps RoCEv2", {16, 100 * kGbps, NetworkKind::roce}},
      {"8 x ConnectX-6 HDR", {8, 200 * kGbps, NetworkKind::infiniband}},
      {"XDR", {no_count, 800 * kGbps, NetworkKind::infiniband}},
      {"8x 200 Gb/s GPUDirect-TCPXO", {8, 200 * kGbps, NetworkKind::ethernet}},
      {"32 x 100 Gb/s EFA", {32, 100 * kGbps, NetworkKind::efa}},
      {"8 IB NICs, 2x 400 Gb/s ConnectX-7 RoCE", {2, 400 * kGbps, NetworkKind::roce}},
      // Ethernet NICs run RDMA; TCP only where the text names a TCP transport.
      {"8x 400GbE Ethernet (Broadcom Thor2)", {8, 400 * kGbps, NetworkKind::roce}},
      {"8x 400 Gb/s AMD Pollara", {8, 400 * kGbps, NetworkKind::roce}},
      {"4x 200 Gb/s Ethernet, GPUDirect-TCPX", {4, 200 * kGbps, NetworkKind::ethernet}},
      {"8×400 Gb/s InfiniBand", {8, 400 * kGbps, NetworkKind::infiniband}},
      {"8x ConnectX-7 400Gb/s InfiniBand", {8, 400 * kGbps, NetworkKind::infiniband}},
      {"8x NVIDIA ConnectX-7 (400 Gb/s NDR)", {8, 400 * kGbps, NetworkKind::infiniband}},
  };
  for (const auto& [text, expected] : cases) EXPECT_EQ(parse_nic_text(text), expected) << text;
}

TEST(CalibrationMachine, NicTextWithoutCountOrRateKeepsThePresets) {
  // A version number is no rate, and FI_CXI names the Slingshot provider.
  EXPECT_EQ(parse_nic_text("Slingshot 11 through aws-ofi-nccl 1.13.0 (FI_CXI_ variables); "
                           "NICs per node not given"),
            (NicDescription{std::nullopt, std::nullopt, NetworkKind::slingshot}));
  EXPECT_EQ(parse_nic_text("n/a (one node; its ConnectX-7 NDR 400G NICs unused)"),
            NicDescription{});
  EXPECT_EQ(parse_nic_text(""), NicDescription{});
  EXPECT_EQ(parse_nic_text("80GB of something"), NicDescription{});  // GB: bytes, not a rate
}

Fabric eight_gpu_switch() {
  return {.generation = cost_model::GpuGeneration::hopper,
          .host = cost_model::HostKind::x86,
          .devices_per_node = 8,
          .scale_up = cost_model::ScaleUpKind::nvswitch,
          .scale_up_bytes_per_s = 450'000'000'000,
          .in_switch_reduction = true,
          .nics_per_node = 8,
          .nic_bytes_per_s = 50'000'000'000,
          .network = NetworkKind::infiniband};
}

TEST(CalibrationMachine, GpusPerNodeSetTheNodeOfASwitchAndKeepItsRate) {
  const Fabric fabric = fitted_fabric(eight_gpu_switch(), preset_for_gpu("H100"),
                                      {"H100", 8, 2, 4, "4x 200 Gb/s RoCE"});
  EXPECT_EQ(fabric.devices_per_node, 4);
  EXPECT_EQ(fabric.scale_up_bytes_per_s, 450'000'000'000);
  EXPECT_EQ(fabric.nics_per_node, 4);
  EXPECT_EQ(fabric.nic_bytes_per_s, 200 * kGbps);
  EXPECT_EQ(fabric.network, NetworkKind::roce);
}

TEST(CalibrationMachine, AFullMeshOfFewerGpusUsesOnlyTheLinksToThoseThere) {
  Fabric mesh = eight_gpu_switch();
  mesh.scale_up = cost_model::ScaleUpKind::full_mesh;
  mesh.scale_up_bytes_per_s = 448'000'000'000;  // 7 links of 64 GB/s
  const Fabric four =
      fitted_fabric(mesh, preset_for_gpu("MI300X"), {"MI300X", 4, 1, 4, "n/a (one node)"});
  EXPECT_EQ(four.devices_per_node, 4);
  EXPECT_EQ(four.scale_up_bytes_per_s, 3 * 64'000'000'000);
}

TEST(CalibrationMachine, AnNvl72RackKeepsItsNvlinkDomainAcrossTrays) {
  Fabric rack = eight_gpu_switch();
  rack.devices_per_node = 72;
  const Fabric fabric =
      fitted_fabric(rack, preset_for_gpu("GB300"), {"NVIDIA GB300", 32, 8, 4, "none: NVLink only"});
  EXPECT_EQ(fabric.devices_per_node, 72);
}

TEST(CalibrationMachine, NicsCountedPerTrayAddUpOverTheRacksNvlinkDomain) {
  // Two NVL72 racks described as 36 trays of 4 GPUs with 4 NICs each: each rack (18 trays) has
  // 72 NICs between it and the other.
  Fabric rack = eight_gpu_switch();
  rack.devices_per_node = 72;
  const Fabric fabric = fitted_fabric(
      rack, preset_for_gpu("GB200"), {"NVIDIA GB200", 144, 36, 4, "4x 400 Gb/s InfiniBand per tray"});
  EXPECT_EQ(fabric.devices_per_node, 72);
  EXPECT_EQ(fabric.nics_per_node, 72);
  EXPECT_EQ(fabric.nic_bytes_per_s, 400 * kGbps);
  // A node that is its own NVLink domain keeps the count as written.
  const Fabric hgx = fitted_fabric(eight_gpu_switch(), preset_for_gpu("H100"),
                                   {"H100", 16, 2, 8, "8x 400 Gb/s InfiniBand"});
  EXPECT_EQ(hgx.nics_per_node, 8);
}

TEST(CalibrationMachine, TraysInSeparateNvlinkDomainsAreNodesOfTheirOwn) {
  // Two GB300 trays of different racks: each is its own NVLink domain, with its four GPUs' share
  // of the rack's 72 NICs when the text gives no count.
  Fabric rack = eight_gpu_switch();
  rack.devices_per_node = 72;
  rack.nics_per_node = 72;
  MachineDescription two_racks{"NVIDIA GB300", 8, 2, 4, "RDMA NICs (count not stated)"};
  two_racks.interconnect = "trays in distinct NVLink domains";
  const Fabric apart = fitted_fabric(rack, preset_for_gpu("GB300"), two_racks);
  EXPECT_EQ(apart.devices_per_node, 4);
  EXPECT_EQ(apart.nics_per_node, 4);
  two_racks.nic = "8x 400 Gb/s RoCE";
  EXPECT_EQ(fitted_fabric(rack, preset_for_gpu("GB300"), two_racks).nics_per_node, 8);
  // More GPUs than a rack holds already span racks: a text that says so keeps the racks' domains.
  MachineDescription racks{"NVIDIA GB300", 144, 36, 4, "4x 800 Gb/s InfiniBand"};
  racks.interconnect = "two racks: distinct NVLink domains";
  EXPECT_EQ(fitted_fabric(rack, preset_for_gpu("GB300"), racks).devices_per_node, 72);
  // The same trays in one rack share its domain and all its NICs.
  two_racks.interconnect = "NVL72 rack, single NVLink domain";
  const Fabric together = fitted_fabric(rack, preset_for_gpu("GB300"), two_racks);
  EXPECT_EQ(together.devices_per_node, 72);
  EXPECT_EQ(together.nics_per_node, 8 * 18);
}

TEST(CalibrationRow, TheInterconnectTextSaysWhenNodesAreInSeparateNvlinkDomains) {
  EXPECT_TRUE(separate_nvlink_domains("RoCE between 2 A4X Max nodes in distinct NVLink domains"));
  EXPECT_TRUE(separate_nvlink_domains("trays in Separate NVLink Domains"));
  EXPECT_TRUE(separate_nvlink_domains("different nvlink  domains"));
  EXPECT_TRUE(separate_nvlink_domains("output represents cross-domain RDMA throughput"));
  EXPECT_FALSE(separate_nvlink_domains("NVLink5 via NVL72 rack (MNNVL, single NVLink domain)"));
  EXPECT_FALSE(separate_nvlink_domains("NVLink 5 multi-node NVLink (two GB200 NVL72 racks)"));
  EXPECT_FALSE(separate_nvlink_domains(""));
}

TEST(CalibrationMachine, TheInterconnectNamesTheNetworkTheNicTextLeavesOut) {
  MachineDescription machine{"H200", 16, 2, 8, "8x 400 Gb/s (ConnectX-7)"};
  machine.interconnect = "NVLink/NVSwitch intra-node + RoCE (GPUDirect RDMA) inter-node";
  EXPECT_EQ(fitted_fabric(eight_gpu_switch(), preset_for_gpu("H200"), machine).network,
            NetworkKind::roce);
  // The nic text's own network wins.
  machine.nic = "8x 400 Gb/s InfiniBand";
  EXPECT_EQ(fitted_fabric(eight_gpu_switch(), preset_for_gpu("H200"), machine).network,
            NetworkKind::infiniband);
  // Neither names one: the preset's.
  machine.nic = "8x 400 Gb/s";
  machine.interconnect = "NVLink4 via NVSwitch";
  EXPECT_EQ(fitted_fabric(eight_gpu_switch(), preset_for_gpu("H200"), machine).network,
            eight_gpu_switch().network);
  // The wording may differ between a machine's rows.
  MachineDescription reworded = machine;
  reworded.interconnect = "NVLink 4 through NVSwitch";
  EXPECT_EQ(machine, reworded);
}

TEST(CalibrationMachine, H800HasItsOwnNvlinkRate) {
  const Fabric fabric =
      fitted_fabric(eight_gpu_switch(), preset_for_gpu("H800"), {"H800", 8, 1, 8, ""});
  EXPECT_EQ(fabric.scale_up_bytes_per_s, 200'000'000'000);
}

TEST(CalibrationMachine, ImpossibleDescriptionsAreErrors) {
  EXPECT_EQ(error_of([] {
              fitted_fabric(eight_gpu_switch(), preset_for_gpu("H100"), {"H100", 16, 1, 16, ""});
            }),
            "gpus_per_node 16: the hgx-h100 preset (H100) has 8 GPUs per NVLink domain, expected "
            "at most 8");
  Fabric no_nics = eight_gpu_switch();
  no_nics.nics_per_node = 0;
  EXPECT_EQ(error_of([&] {
              fitted_fabric(no_nics, preset_for_gpu("H100"), {"H100", 16, 2, 8, "unknown"});
            }),
            "nic 'unknown': 16 GPUs span more than one NVLink domain of 8, but neither this text "
            "nor the hgx-h100 preset gives NICs; expected a count and rate such as '8x 400 Gb/s'");
}

// The real preset, fitted: needs sim/machine_presets' GPU presets with their fabric.
TEST(CalibrationMachine, ThePresetsFabricIsFittedToTheRow) {
  const CalibrationMachine machine =
      calibration_machine({"NVIDIA H100 80GB HBM3", 16, 2, 8, "8 x 200 Gb/s RoCE"});
  EXPECT_EQ(machine.preset, "hgx-h100");
  EXPECT_EQ(machine.fabric.devices_per_node, 8);
  EXPECT_EQ(machine.fabric.nics_per_node, 8);
  EXPECT_EQ(machine.fabric.nic_bytes_per_s, 200 * kGbps);
  EXPECT_EQ(machine.fabric.network, NetworkKind::roce);
}

// ---- Rows

using test_calibration::published_calibration_header;

TEST(CalibrationRows, ARowReadsEveryFieldValidateUses) {
  const CsvTable table = CsvTable::parse(
      published_calibration_header() +
          "h100_box,NVIDIA H100,8,1,8,\"NVLink4, NVSwitch\",n/a,all_gather,float,none,1048576,,"
          "100,,in-place,Ring (env),LL128,off,2.18,\"src, with comma\",\"a \"\"note\"\"\"\n",
      "m.csv");
  const std::vector<CalibrationRow> rows = read_calibration_rows(table);
  ASSERT_EQ(rows.size(), 1u);
  const CalibrationRow& row = rows[0];
  EXPECT_EQ(row.line, 2);
  EXPECT_EQ(row.config_id, "h100_box");
  EXPECT_EQ(row.machine, (MachineDescription{"NVIDIA H100", 8, 1, 8, "n/a"}));
  EXPECT_EQ(row.op, TimedOp::all_gather);
  EXPECT_EQ(row.op_name, "all_gather");
  EXPECT_EQ(row.size_bytes, 1048576);
  EXPECT_DOUBLE_EQ(*row.measured_time_us, 1048576 / 100.0 / 1e3);
  EXPECT_EQ(row.forced_algorithm, LibraryAlgorithm::ring);
  EXPECT_EQ(row.forced_protocol, Protocol::ll128);
  EXPECT_TRUE(row.in_place);
  EXPECT_EQ(row.element_bytes, 4);
}

TEST(CalibrationRows, TheDtypeGivesTheElementSizeElseNcclTestsFloat) {
  EXPECT_EQ(element_bytes_of_dtype("float"), 4);
  EXPECT_EQ(element_bytes_of_dtype("float (a note)"), 4);
  EXPECT_EQ(element_bytes_of_dtype("BFloat16"), 2);
  EXPECT_EQ(element_bytes_of_dtype(" half"), 2);
  EXPECT_EQ(element_bytes_of_dtype("double"), 8);
  EXPECT_EQ(element_bytes_of_dtype("int8"), 1);
  EXPECT_EQ(element_bytes_of_dtype(""), 4);
  EXPECT_EQ(element_bytes_of_dtype("custom"), 4);
}

TEST(CalibrationRows, ARowOfSizeZeroIsListedAsNotPredicted) {
  // nccl-tests prints size 0 where the count per rank rounds down to nothing.
  const std::vector<CalibrationRow> rows = read_calibration_rows(CsvTable::parse(
      published_calibration_header() +
          "a,H100,16,2,8,,8x 400 Gb/s,all_gather,float,none,0,0.12,0.00,0.00,,,,,,,\n",
      "m.csv"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].size_bytes, 0);
  EXPECT_EQ(rows[0].not_predicted, "size_bytes 0 moves no data");
}

TEST(CalibrationRows, AProtocolTheModelDoesNotTimeIsListedAsNotPredicted) {
  const std::vector<CalibrationRow> rows = read_calibration_rows(
      CsvTable::parse(published_calibration_header() +
                          "a,H100,8,1,8,,n/a,all_reduce,float,sum,1024,10,,,,Ring,LL64,,,,\n",
                      "m.csv"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].not_predicted, "nccl_proto LL64 is not timed");
}

TEST(CalibrationRows, BadFieldsNameTheFileLineColumnAndText) {
  const std::string good = "a,H100,8,1,8,,,all_reduce,float,sum,8,10,,,out-of-place,,,,,,\n";
  const auto error_in = [&](const std::string& bad_row) {
    return error_of([&] {
      read_calibration_rows(
          CsvTable::parse(published_calibration_header() + good + bad_row, "m.csv"));
    });
  };
  EXPECT_EQ(error_in("a,H100,8,1,8,,,all_reduce,float,sum,abc,10,,,,,,,,,\n"),
            "m.csv:3: size_bytes 'abc': expected an integer of at least 0");
  EXPECT_EQ(error_in("a,H100,8,1,8,,,all_reduce,float,sum,-8,10,,,,,,,,,\n"),
            "m.csv:3: size_bytes '-8': expected an integer of at least 0");
  EXPECT_EQ(error_in("a,H100,8,2,8,,,all_reduce,float,sum,8,10,,,,,,,,,\n"),
            "m.csv:3: gpus_total 8: expected nodes x gpus_per_node = 2 x 8");
  EXPECT_EQ(error_in("a,H100,8,1,8,,,all_reduce,float,sum,8,fast,,,,,,,,,\n"),
            "m.csv:3: time_us 'fast': expected a number of at least 0, or nothing");
  EXPECT_EQ(error_in(",H100,8,1,8,,,all_reduce,float,sum,8,10,,,,,,,,,\n"),
            "m.csv:3: config_id '': expected a name");
}

TEST(CalibrationRows, MissingColumnsAreNamed) {
  const CsvTable table = CsvTable::parse("config_id,gpu,op\n", "m.csv");
  EXPECT_EQ(error_of([&] { read_calibration_rows(table); }),
            "m.csv: missing columns gpus_total, nodes, gpus_per_node, size_bytes; expected the "
            "calibration format's columns config_id, gpu, gpus_total, nodes, gpus_per_node, op, "
            "size_bytes and at least one of time_us, algbw_GBps and busbw_GBps");
  const CsvTable no_figures =
      CsvTable::parse("config_id,gpu,gpus_total,nodes,gpus_per_node,op,size_bytes\n", "f.csv");
  EXPECT_EQ(error_of([&] { read_calibration_rows(no_figures); }),
            "f.csv: missing columns time_us, algbw_GBps and busbw_GBps; expected the calibration "
            "format's columns config_id, gpu, gpus_total, nodes, gpus_per_node, op, size_bytes and "
            "at least one of time_us, algbw_GBps and busbw_GBps");
}

// A file may leave out the columns that say what was not stated or not forced (nic, nccl_algo,
// nccl_proto) and all but one of the measured figures: absent reads as empty.
TEST(CalibrationRows, AFileMayLeaveOutWhatItDoesNotState) {
  const CsvTable table = CsvTable::parse(
      "config_id,gpu,gpus_total,nodes,gpus_per_node,op,size_bytes,busbw_GBps\n"
      "box,NVIDIA H100,8,1,8,all_reduce,1073741824,400\n",
      "m.csv");
  const std::vector<CalibrationRow> rows = read_calibration_rows(table);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].machine, (MachineDescription{"NVIDIA H100", 8, 1, 8, ""}));
  EXPECT_FALSE(rows[0].forced_algorithm);
  EXPECT_FALSE(rows[0].forced_protocol);
  EXPECT_TRUE(rows[0].not_predicted.empty()) << rows[0].not_predicted;
  // busbw = algbw * 2 (n - 1) / n for an all-reduce: 1 GiB at 400 * 8 / 14 GB/s.
  ASSERT_TRUE(rows[0].measured_time_us);
  EXPECT_NEAR(*rows[0].measured_time_us, 1073741824 / (400e3 * 8 / 14), 1e-6);
}

// ---- Error statistics

TEST(ErrorSummary, PercentilesAreNearestRank) {
  // rank ceil(p n): the median of 4 is the 2nd, of 5 the 3rd; p90 of 10 is the 9th, of 11 the
  // 10th.
  EXPECT_EQ(nearest_rank_percentile({4, 1, 3, 2}, 50), 2);
  EXPECT_EQ(nearest_rank_percentile({5, 4, 1, 3, 2}, 50), 3);
  EXPECT_EQ(nearest_rank_percentile({10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 90), 9);
  EXPECT_EQ(nearest_rank_percentile({11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 90), 10);
  EXPECT_EQ(nearest_rank_percentile({7}, 90), 7);
  EXPECT_EQ(nearest_rank_percentile({}, 50), std::nullopt);
}

TEST(ErrorSummary, SummarizesAbsoluteErrors) {
  EXPECT_DOUBLE_EQ(relative_error(110, 100), 0.1);
  EXPECT_DOUBLE_EQ(relative_error(50, 100), -0.5);
  const ErrorSummary summary = summarize_errors({-0.5, 0.1, -0.05, 0.2});
  EXPECT_EQ(summary.rows, 4);
  EXPECT_DOUBLE_EQ(*summary.median_abs_error, 0.1);  // |e| sorted: 0.05 0.1 0.2 0.5
  EXPECT_DOUBLE_EQ(*summary.p90_abs_error, 0.5);
  EXPECT_DOUBLE_EQ(*summary.share_within_10_percent, 0.5);  // 0.1 counts as within
  const ErrorSummary none = summarize_errors({});
  EXPECT_EQ(none.rows, 0);
  EXPECT_EQ(none.median_abs_error, std::nullopt);
  EXPECT_EQ(none.share_within_10_percent, std::nullopt);
}

}  // namespace
}  // namespace spmd
