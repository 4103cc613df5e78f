// The spmdsim commands a person meets first, checked by their output: the demo (losses, the
// bit-identity and reference checks, costs, a trace that is valid JSON with the named tracks and
// the same bytes on every run), perf's nccl-tests table, run's reports, scale's table and plot,
// and exit code 2 with a one-line error for bad values.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli/demo_command.h"
#include "cli/perf_command.h"
#include "cli/run_command.h"
#include "cli/scale_command.h"
#include "support/output_file.h"
#include "traces/chrome_trace.h"
#include "tests/error_of.h"
#include "tests/spmdsim_binary.h"

namespace spmd {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path scratch_folder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("spmdsim_cli_test_" + name);
  fs::remove_all(dir);
  return dir;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// ---- demo

TEST(DemoCommand, TrainsChecksAndReportsCosts) {
  const fs::path dir = scratch_folder("demo");
  std::ostringstream out;
  ASSERT_EQ(run_demo_command({.out_folder = dir.string(), .steps = 20}, out), 0) << out.str();
  const std::string text = out.str();
  EXPECT_NE(text.find("bit-identical after every step: yes"), std::string::npos) << text;
  EXPECT_NE(text.find("equal the reference backend's (sums folded in the ring algorithm's "
                      "order) bit for bit: yes"),
            std::string::npos);
  EXPECT_NE(text.find("memory peak per device: 0: "), std::string::npos);
  EXPECT_NE(text.find("all-reduce: 5 pmean calls per step (ring)"), std::string::npos);
  EXPECT_NE(text.find("% communication)"), std::string::npos);
  // Twenty loss lines, falling from the first to the last.
  std::vector<double> losses;
  for (const std::string& line : lines_of(text)) {
    int step = 0;
    double loss = 0;
    if (std::sscanf(line.c_str(), " %d %lf", &step, &loss) == 2 && line.size() < 20) {
      losses.push_back(loss);
    }
  }
  ASSERT_EQ(losses.size(), 20u) << text;
  EXPECT_LT(losses.back(), losses.front() / 2);
}

TEST(DemoCommand, TraceIsValidJsonWithTheNamedTracksAndRepeatsByteForByte) {
  const fs::path first = scratch_folder("demo_trace_1"), second = scratch_folder("demo_trace_2");
  std::ostringstream ignored;
  ASSERT_EQ(run_demo_command({.out_folder = first.string(), .steps = 3}, ignored), 0);
  ASSERT_EQ(run_demo_command({.out_folder = second.string(), .steps = 3}, ignored), 0);
  const std::string bytes = read_file(first / "trace.json");
  EXPECT_EQ(bytes, read_file(second / "trace.json"));
  EXPECT_EQ(read_file(first / "collectives.csv"), read_file(second / "collectives.csv"));

  const nlohmann::json trace = nlohmann::json::parse(bytes);
  std::set<std::string> processes, threads, counters, slices;
  int flow_starts = 0, flow_ends = 0;
  for (const auto& event : trace.at("traceEvents")) {
    const std::string phase = event.at("ph");
    if (phase == "M" && event["name"] == "process_name") processes.insert(event["args"]["name"]);
    if (phase == "M" && event["name"] == "thread_name") threads.insert(event["args"]["name"]);
    if (phase == "C") counters.insert(event["name"]);
    if (phase == "X") slices.insert(event["cat"]);
    flow_starts += phase == "s";
    flow_ends += phase == "f";
  }
  EXPECT_EQ(processes.size(), 8u);
  EXPECT_TRUE(processes.contains("device 0") && processes.contains("device 7"));
  EXPECT_EQ(threads, (std::set<std::string>{"compute", "collectives"}));
  EXPECT_EQ(counters, (std::set<std::string>{"memory in use"}));
  EXPECT_EQ(slices, (std::set<std::string>{"compute", "collective"}));
  // One arrow per message the links carried, as counted in the report.
  const nlohmann::json report = nlohmann::json::parse(read_file(first / "report.json"));
  EXPECT_GT(flow_starts, 0);
  EXPECT_EQ(flow_starts, report["totals"]["link_messages"].get<int>());
  EXPECT_EQ(flow_ends, flow_starts);
}

TEST(DemoCommand, IsWhatTheBinaryRunsWithoutArguments) {
  const fs::path dir = scratch_folder("demo_binary");
  const CommandResult result = run_binary("demo --steps 2 --out " + dir.string());
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("spmdsim demo: data-parallel training"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "trace.json"));
}

// ---- perf

std::vector<std::vector<std::string>> table_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  for (const std::string& line : lines_of(text)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::vector<std::string> row;
    for (std::string field; fields >> field;) row.push_back(field);
    rows.push_back(row);
  }
  return rows;
}

TEST(PerfCommand, PrintsNcclTestsColumnsForEverySize) {
  PerfOptions options;
  options.machine.devices = 8;
  options.min_bytes = "1K";
  options.max_bytes = "1M";
  options.step_factor = 4;
  std::ostringstream out;
  ASSERT_EQ(run_perf_command(options, out), 0);
  EXPECT_NE(out.str().find("#       size         count      type   redop    root        time     "
                           "algbw     busbw"),
            std::string::npos);
  const auto rows = table_rows(out.str());
  ASSERT_EQ(rows.size(), 6u) << out.str();  // 1K, 4K, ..., 1M
  std::int64_t expected_size = 1024;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 9u);
    EXPECT_EQ(std::stoll(row[0]), expected_size);
    EXPECT_EQ(std::stoll(row[1]), expected_size / 4);
    EXPECT_EQ(row[2], "float");
    EXPECT_EQ(row[3], "sum");
    EXPECT_EQ(row[4], "-1");
    // busbw = algbw · 2(n-1)/n for all-reduce, and algbw = size / time.
    const double time_us = std::stod(row[5]), algbw = std::stod(row[6]), busbw = std::stod(row[7]);
    EXPECT_NEAR(algbw, static_cast<double>(expected_size) / time_us / 1e3, 0.01);
    EXPECT_NEAR(busbw, algbw * 1.75, 0.011);
    expected_size *= 4;
  }
}

TEST(PerfCommand, CostOnlyGivesTheSameTimesAsWithData) {
  PerfOptions options;
  options.op = "reduce_scatter";
  options.machine.devices = 4;
  options.machine.topology = "torus:2x2";
  options.max_bytes = "64K";
  options.step_factor = 8;
  std::ostringstream with_data, cost_only;
  run_perf_command(options, with_data);
  options.cost_only = true;
  run_perf_command(options, cost_only);
  const auto a = table_rows(with_data.str()), b = table_rows(cost_only.str());
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a, b);
}

// dgx-h100 has a fabric with in-switch reduction: a large all-reduce is timed as NCCL's NVLS,
// whose published busbw on 8x H100 is about 480 GB/s (docs/machine-presets.md); within 15%.
TEST(PerfCommand, OnThePresetALargeAllReduceIsNvlsNearItsPublishedBusBandwidth) {
  PerfOptions options;
  options.machine.machine = "dgx-h100";
  options.min_bytes = options.max_bytes = "1G";
  options.cost_only = true;
  std::ostringstream out;
  run_perf_command(options, out);
  const auto rows = table_rows(out.str());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][8].rfind("nvls/", 0), 0u) << rows[0][8];
  EXPECT_GT(std::stod(rows[0][7]), 0.85 * 480);
  EXPECT_LT(std::stod(rows[0][7]), 1.15 * 480);
}

// -n with a preset: that preset with so many devices (machine_preset_with_devices).
TEST(PerfCommand, DevicesWithAPresetMakeNodesOfIt) {
  const CommandResult result = run_binary("perf --machine hgx-h100 -n 16 --cost-only -b 8 -e 8");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("all_reduce on hgx-h100 x2 nodes (16 devices): "),
            std::string::npos)
      << result.output;
  const CommandResult slice = run_binary("perf --machine tpu-v6e -n 64 --cost-only -b 1M -e 1M");
  EXPECT_EQ(slice.exit_code, 0) << slice.output;
  EXPECT_NE(slice.output.find("tpu-v6e 8x8 slice (64 chips)"), std::string::npos)
      << slice.output;
}

// --nccl-algo / --nccl-proto force the library's choice, as NCCL_ALGO / NCCL_PROTO do.
TEST(PerfCommand, NcclAlgoAndProtoForceTheLibrarysChoice) {
  const CommandResult ring =
      run_binary("perf --machine hgx-h100 --cost-only -b 1G -e 1G --nccl-algo ring");
  EXPECT_EQ(ring.exit_code, 0) << ring.output;
  EXPECT_NE(ring.output.find("ring/Simple"), std::string::npos) << ring.output;
  const CommandResult ll = run_binary("perf --machine hgx-h100 --cost-only -b 1M -e 1M --nccl-proto ll");
  EXPECT_EQ(ll.exit_code, 0) << ll.output;
  EXPECT_NE(ll.output.find("/LL  "), std::string::npos) << ll.output;
  // On a machine with a fabric each time carries its range, after the algorithm.
  EXPECT_NE(ll.output.find("algorithm     range (us)"), std::string::npos) << ll.output;
  const CommandResult run = run_binary("run hgx-h100 " + std::string(SPMD_SOURCE_DIR) +
                                       "/docs/workloads/transformer-layer.json --nccl-algo tree");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find(" tree/"), std::string::npos) << run.output;
}

// --gpus-per-process / --graph-launch: how the program launches its collectives, as nccl-tests'
// -g and -G; the header says so. One process driving 8 MI300X runs RCCL's ring, not MSCCL.
TEST(PerfCommand, LaunchFlagsSetHowCollectivesAreLaunched) {
  const CommandResult per_gpu = run_binary("perf --machine mi300x --cost-only -b 4K -e 4K");
  EXPECT_EQ(per_gpu.exit_code, 0) << per_gpu.output;
  EXPECT_NE(per_gpu.output.find("allpairs/LL"), std::string::npos) << per_gpu.output;
  const CommandResult shared = run_binary(
      "perf --machine mi300x --cost-only -b 4K -e 4K --gpus-per-process 8 --graph-launch");
  EXPECT_EQ(shared.exit_code, 0) << shared.output;
  EXPECT_NE(shared.output.find("one process per 8 GPUs, graph launch"), std::string::npos)
      << shared.output;
  EXPECT_NE(shared.output.find("ring/LL"), std::string::npos) << shared.output;
}

// An nccl-tests output of 8 ranks on two hosts, as its rank 0 prints it.
std::string two_host_all_reduce_output(const std::string& test) {
  std::string text =
      "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 1024(factor) warmup "
      "iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n";
  for (int rank = 0; rank < 8; ++rank) {
    text += fmt::format("#  Rank {:2} Group  0 Pid {} on node-{} device  {} [0x01] GH200\n", rank,
                        100 + rank, rank / 4, rank % 4);
  }
  return text + "# Collective test starting: " + test +
         "\n"
         "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
         "time   algbw   busbw #wrong\n"
         "     1048576        262144     float     sum      -1    300.0    3.50    6.12      0    "
         "300.0    3.50    6.12      0\n"
         "  1073741824     268435456     float     sum      -1  12158.0   88.32  154.55      0  "
         "12158.0   88.31  154.55      0\n";
}

// --compare: the output's sizes, op and ranks, its time and the error beside each prediction,
// and their median and p90.
TEST(PerfCommand, CompareSetsTheOutputsTimesBesideThePredictions) {
  const fs::path dir = scratch_folder("perf_compare");
  fs::create_directories(dir);
  const fs::path log = dir / "all_reduce.log";
  std::ofstream(log) << two_host_all_reduce_output("all_reduce_perf");
  const CommandResult result = run_binary("perf --machine gh200-quad --compare " + log.string());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("all_reduce on gh200-quad x2 nodes (8 devices)"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("cost only, beside " + log.string()), std::string::npos);
  const auto rows = table_rows(result.output);
  ASSERT_EQ(rows.size(), 2u) << result.output;
  EXPECT_EQ(rows[0][0], "1048576");
  EXPECT_EQ(rows[0][8], "300.00");
  EXPECT_EQ(rows[1][0], "1073741824");
  EXPECT_EQ(rows[1][8], "12158.00");
  std::vector<double> errors;
  for (const auto& row : rows) {
    const double predicted = std::stod(row[5]), measured = std::stod(row[8]);
    const double error = (predicted - measured) / measured;
    EXPECT_NEAR(std::stod(row[9]), 100 * error, 0.051) << row[9];  // printed to 0.1%
    errors.push_back(std::abs(error));
  }
  // Nearest rank: the median of two is the smaller, the p90 the larger.
  EXPECT_NE(result.output.find(fmt::format(
                "# 2 sizes beside {}: median |error| {:.1f}%, p90 |error| {:.1f}%", log.string(),
                100 * std::min(errors[0], errors[1]), 100 * std::max(errors[0], errors[1]))),
            std::string::npos)
      << result.output;
}

// What the output says of the run and the flags must agree; where they cannot, one line says so.
TEST(PerfCommand, CompareErrorsNameTheFlagAndTheOutput) {
  const fs::path dir = scratch_folder("perf_compare_errors");
  fs::create_directories(dir);
  const fs::path all_reduce = dir / "all_reduce.log", bare = dir / "bare.log",
                 gather = dir / "gather.log";
  std::ofstream(all_reduce) << two_host_all_reduce_output("all_reduce_perf");
  std::ofstream(gather) << two_host_all_reduce_output("gather_perf");
  std::ofstream(bare) << "     1048576        262144     float     sum      -1    300.0    3.50    "
                         "6.12      0    300.0    3.50    6.12      0\n";
  const std::string a = all_reduce.string(), b = bare.string(), g = gather.string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"perf --machine gh200-quad --op all_gather --compare " + a,
       "error: --op all_gather: --compare " + a +
           " is all_reduce_perf's output; expected --op all_reduce or no --op"},
      {"perf --machine gh200-quad -n 16 --compare " + a,
       "error: --devices 16: --compare " + a + " ran on 8 ranks; expected -n 8 or no -n"},
      {"perf --machine gh200-quad --compare " + b,
       "error: --compare " + b +
           ": the output names no test (all_reduce_perf, ...); expected --op to say which "
           "collective it measured"},
      {"perf --machine gh200-quad --compare " + g,
       "error: --compare " + g + ": gather_perf's output; expected one of all_reduce_perf"},
      {"perf --compare " + a + " -e 1G", "error: --maxbytes excludes --compare"},
      {"perf --compare " + (dir / "none.log").string(),
       "error: " + (dir / "none.log").string() + ": cannot read the nccl-tests output"},
  };
  for (const auto& [arguments, expected] : cases) {
    const CommandResult result = run_binary(arguments);
    EXPECT_EQ(result.exit_code, 2) << arguments << ": " << result.output;
    EXPECT_EQ(result.output.rfind(expected, 0), 0u) << arguments << ": " << result.output;
    EXPECT_EQ(lines_of(result.output).size(), 1u) << arguments << ": " << result.output;
  }
  // --max-median and --max-p90 limit --compare's errors, as validate's limit its rows': above,
  // exit code 1 and one line naming the limit; without --compare, exit code 2.
  const CommandResult within =
      run_binary("perf --machine gh200-quad --compare " + a + " --max-median 10 --max-p90 10");
  EXPECT_EQ(within.exit_code, 0) << within.output;
  const CommandResult above =
      run_binary("perf --machine gh200-quad --compare " + a + " --max-p90 0");
  EXPECT_EQ(above.exit_code, 1) << above.output;
  EXPECT_NE(above.output.find("perf: p90 |error| "), std::string::npos) << above.output;
  EXPECT_NE(above.output.find(" is above --max-p90 0 (0.0%)\n"), std::string::npos) << above.output;
  const CommandResult alone = run_binary("perf --max-p90 0.3");
  EXPECT_EQ(alone.exit_code, 2) << alone.output;
  EXPECT_EQ(alone.output.rfind("error: --max-median, --max-p90: given without --compare", 0), 0u)
      << alone.output;
  // A bare table with --op runs, on -n's devices, and a note says the output gave no ranks.
  const CommandResult with_op =
      run_binary("perf --machine gh200-quad --op all_reduce --compare " + b);
  EXPECT_EQ(with_op.exit_code, 0) << with_op.output;
  EXPECT_NE(with_op.output.find("does not say on how many ranks it ran"), std::string::npos);
}

TEST(PerfCommand, LinkSharingFlagPicksTheModel) {
  // A direct all-to-all on a ring: many messages share each link. Fifo holds a whole route per
  // message; fair shares each link's bandwidth between them (docs/link-sharing.md).
  PerfOptions options;
  options.op = "all_to_all";
  options.machine.devices = 8;
  options.machine.topology = "ring";
  options.machine.algorithm = "direct";
  options.min_bytes = options.max_bytes = "1M";
  options.cost_only = true;
  const auto time_us = [&](const std::string& sharing) {
    options.machine.link_sharing = sharing;
    std::ostringstream out;
    run_perf_command(options, out);
    return std::stod(table_rows(out.str()).at(0)[5]);
  };
  const double fair = time_us("fair");
  EXPECT_EQ(time_us(""), fair);  // the default
  EXPECT_LT(fair, time_us("fifo"));
}

TEST(PerfCommand, BroadcastHasRootZeroAndNoReduction) {
  PerfOptions options;
  options.op = "broadcast";
  options.max_bytes = "8";
  std::ostringstream out;
  run_perf_command(options, out);
  const auto rows = table_rows(out.str());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][3], "none");
  EXPECT_EQ(rows[0][4], "0");
  EXPECT_GT(std::stod(rows[0][5]), 0.0);
}

// ---- run and scale

TEST(RunCommand, WritesReportsThatAgreeWithThePrintedSummary) {
  const fs::path dir = scratch_folder("run");
  std::ostringstream out;
  ASSERT_EQ(run_run_command({.machine = "dgx-h100",
                             .workload = std::string(SPMD_SOURCE_DIR) +
                                         "/docs/workloads/transformer-layer.json",
                             .out_folder = dir.string()},
                            out),
            0);
  EXPECT_NE(out.str().find("on dgx-h100: 8x H100 SXM"), std::string::npos) << out.str();
  const nlohmann::json report = nlohmann::json::parse(read_file(dir / "report.json"));
  // 4 activation psums over 'model' (2 forward, 2 backward); the 4 gradient pmeans over a
  // one-device 'data' axis.
  EXPECT_EQ(report["collectives"].size(), 8u);
  EXPECT_EQ(report["collectives"][0]["call"], "psum('model')");
  EXPECT_EQ(report["devices"].size(), 8u);
  const auto& totals = report["totals"];
  EXPECT_EQ(
      totals["compute_ps"].get<std::int64_t>() + totals["communication_ps"].get<std::int64_t>(),
      totals["total_ps"].get<std::int64_t>());
  EXPECT_GT(totals["compute_ps"].get<std::int64_t>(), 0);
  EXPECT_GT(totals["peak_memory_bytes"].get<std::int64_t>(), 0);
  EXPECT_EQ(lines_of(read_file(dir / "collectives.csv")).size(), 9u);  // header + 8
  EXPECT_TRUE(nlohmann::json::accept(read_file(dir / "trace.json")));
}

// issue 14: a trace of a machine of nodes groups device tracks by node, draws each collective
// once per node, and says on stdout how many link messages it left without an arrow.
TEST(RunCommand, TraceGroupsDevicesByNodeAndSaysWhenArrowsWereDropped) {
  const fs::path dir = scratch_folder("run_grouped");
  std::ostringstream out;
  ASSERT_EQ(run_run_command({.machine = std::string(SPMD_SOURCE_DIR) + "/docs/machines/two-boxes.json",
                             .workload = std::string(SPMD_SOURCE_DIR) +
                                         "/docs/workloads/transformer-layer.json",
                             .out_folder = dir.string(),
                             .full_simulation = true,
                             .trace_arrows = 10},
                            out),
            0);
  const nlohmann::json trace = nlohmann::json::parse(read_file(dir / "trace.json"));
  const nlohmann::json report = nlohmann::json::parse(read_file(dir / "report.json"));
  std::set<std::string> processes, threads, counters;
  int collective_slices = 0, flow_starts = 0;
  for (const auto& event : trace.at("traceEvents")) {
    const std::string phase = event.at("ph");
    if (phase == "M" && event["name"] == "process_name") processes.insert(event["args"]["name"]);
    if (phase == "M" && event["name"] == "thread_name") threads.insert(event["args"]["name"]);
    if (phase == "C") counters.insert(event["name"]);
    collective_slices += phase == "X" && event["cat"] == "collective";
    flow_starts += phase == "s";
  }
  EXPECT_EQ(processes, (std::set<std::string>{"node 0 (devices 0-7)", "node 1 (devices 8-15)"}));
  // The 8 model-parallel devices of a node compute and hold the same: one thread per node.
  // (and collectives threads: "collectives", "collectives 2" where gradient reductions overlap).
  threads.erase("collectives 2");
  EXPECT_EQ(threads, (std::set<std::string>{"collectives", "devices 0-7", "devices 8-15"}));
  EXPECT_EQ(counters, (std::set<std::string>{"devices 0-7 memory in use",
                                             "devices 8-15 memory in use"}));
  const auto collectives = report["collectives"].size();
  ASSERT_GT(collectives, 0u);
  EXPECT_EQ(collective_slices, static_cast<int>(2 * collectives));
  EXPECT_EQ(flow_starts, 10);
  const auto messages = report["totals"]["link_messages"].get<std::int64_t>();
  ASSERT_GT(messages, 10);
  EXPECT_NE(out.str().find(fmt::format("trace: arrows for the first 10 of {} link messages only",
                                       messages)),
            std::string::npos)
      << out.str();
}

// Devices of a group whose compute and memory are the same share a thread; the rest keep
// their own. (Collectives once per group where arrows join them: the run test below.)
TEST(ChromeTrace, AlikeDevicesOfAGroupShareAThreadAndCollectivesAreDrawnOncePerGroup) {
  sim::CostLog log;
  log.memory.resize(4);
  for (int device : {0, 1, 3}) log.compute_spans.push_back({device, 0, 1'000'000, 2e9, 64});
  log.compute_spans.push_back({2, 0, 2'000'000, 4e9, 64});
  log.collectives.push_back({.op = "psum", .call = "psum('i')", .start_ps = 2'000'000,
                             .end_ps = 3'000'000});
  const nlohmann::json trace =
      traces::chrome_trace(log, {.machine_name = "m", .devices = 4, .groups = {2, "node"}});
  std::set<std::string> processes, threads;
  int compute = 0, collectives = 0;
  for (const auto& event : trace.at("traceEvents")) {
    if (event["ph"] == "M" && event["name"] == "process_name") processes.insert(event["args"]["name"]);
    if (event["ph"] == "M" && event["name"] == "thread_name") threads.insert(event["args"]["name"]);
    compute += event["ph"] == "X" && event["cat"] == "compute";
    collectives += event["ph"] == "X" && event["cat"] == "collective";
  }
  // No arrows: the collective is drawn once, in a process of its own.
  EXPECT_EQ(processes, (std::set<std::string>{"collectives (every device)", "node 0 (devices 0-1)",
                                              "node 1 (devices 2-3)"}));
  EXPECT_EQ(threads, (std::set<std::string>{"collectives", "devices 0-1", "device 2", "device 3"}));
  EXPECT_EQ(compute, 3);
  EXPECT_EQ(collectives, 1);
  // The text form is the same trace, written event by event.
  EXPECT_EQ(nlohmann::json::parse(traces::chrome_trace_text(
                log, {.machine_name = "m", .devices = 4, .groups = {2, "node"}})),
            trace);
}

TEST(ScaleCommand, PrintsARowPerDeviceCountAndPlotsAPng) {
  const fs::path dir = scratch_folder("scale");
  ScaleOptions options;
  options.workload = std::string(SPMD_SOURCE_DIR) + "/docs/workloads/mlp-data-parallel.json";
  options.devices = {8, 16, 32};
  options.machine.topology = "torus";
  options.out_folder = dir.string();
  std::ostringstream out;
  ASSERT_EQ(run_scale_command(options, out), 0);
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : table_rows(out.str())) {
    if (!row.empty() && std::isdigit(static_cast<unsigned char>(row[0][0]))) rows.push_back(row);
  }
  ASSERT_EQ(rows.size(), 3u) << out.str();
  EXPECT_EQ(rows[0][0], "8");
  EXPECT_EQ(rows[2][0], "32");
  for (const auto& row : rows) {
    EXPECT_GT(std::stod(row[1]), 0.0);  // step time
    EXPECT_GT(std::stod(row[2]), 0.0);  // communication %
    EXPECT_LE(std::stod(row[2]), 100.0);
    EXPECT_GT(std::stod(row[3]), 0.0);  // busbw
  }
  // Throughput (samples/s: the MLP's batch grows with the devices), its ideal line from the first
  // point, and the efficiency between them.
  EXPECT_NE(out.str().find("samples_per_s  ideal_samples_per_s  scaling_efficiency_%  busbw_data_GBps"),
            std::string::npos)
      << out.str();
  EXPECT_DOUBLE_EQ(std::stod(rows[0][9]), 100.0);
  for (const auto& row : rows) {
    const double throughput = std::stod(row[7]), ideal = std::stod(row[8]);
    EXPECT_NEAR(std::stod(row[9]), 100 * throughput / ideal, 0.05 + 1e-9);
    EXPECT_GT(std::stod(row[10]), 0.0);  // busbw on the one axis, data
  }
  // (six significant digits in the table)
  EXPECT_NEAR(std::stod(rows[2][8]), 4 * std::stod(rows[0][7]), 1e-5 * std::stod(rows[2][8]));
  const std::string script = read_file(dir / "scale.gp");
  EXPECT_NE(script.find("on torus, links"), std::string::npos) << script;
  EXPECT_NE(script.find("title \"data\""), std::string::npos) << script;
  const std::string png = read_file(dir / "scale.png");
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  // --no-plot still writes the table to --out.
  const fs::path table_only = scratch_folder("scale_no_plot");
  options.out_folder = table_only.string();
  options.plot = false;
  std::ostringstream table_out;
  ASSERT_EQ(run_scale_command(options, table_out), 0);
  EXPECT_NE(table_out.str().find("table: " + (table_only / "scale.dat").string()), std::string::npos);
  const std::string table = read_file(table_only / "scale.dat");
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 4);  // the header and 3 rows
  EXPECT_FALSE(fs::exists(table_only / "scale.png"));
}

// ---- errors

TEST(CliErrors, BadValuesExitWithCodeTwoAndOneLineNamingTheFlag) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"perf --op all_sum", "error: --op all_sum: expected all_reduce"},
      {"perf -e 1Q", "error: -e"},
      {"perf -b 1M -e 1K", "error: -e 1K: expected a size at least -b (1M)"},
      {"perf --link fast", "error: --link fast: expected BANDWIDTH,LATENCY such as 100GB/s,1us"},
      {"perf --machine dgx-z1", "error: machine dgx-z1: no such preset or file"},
      {"perf --link-sharing maxmin", "error: --link-sharing maxmin: expected fair or fifo"},
      {"perf -d float33", "error: "},
      {"run dgx-h100 /nonexistent.json",
       "error: /nonexistent.json: cannot read the workload file (no such file)"},
      {"scale --workload /nonexistent.json", "error: /nonexistent.json"},
      {"demo --steps 0", "error: "},
      {"perf --topology ring:5", "error: --topology: 'ring:5', expected ring without ':'"},
      {"perf --topology switch:4", "error: --topology: 'switch:4', expected switch without ':'"},
      {"perf --topology torus:", "error: --topology: 'torus:', expected torus[:AxB[xC]]"},
      {"perf -e 1TiB",
       "error: -e 1TiB: with data, all_reduce on 8 devices holds about 1 TiB (buffers of 1 TiB: "
       "1 in all), more than the "},
      {"perf --algorithm ''", "error: --algorithm: '' is empty, expected a value"},
      {"perf --machine ''", "error: --machine: '' is empty, expected a value"},
      {"perf --machine " + std::string(SPMD_SOURCE_DIR) + "/docs/machines/two-boxes.json -n 64",
       "error: --devices 64: given with --machine " + std::string(SPMD_SOURCE_DIR) +
           "/docs/machines/two-boxes.json, which sets the devices"},
      {"perf --machine hgx-h100 -n 12 --cost-only -b 8 -e 8",
       "error: --devices 12: hgx-h100 takes 1 to 8 devices (part of one node) or a multiple of 8 "
       "(whole nodes), not 12"},
      {"perf --machine tpu-v5p -n 96", "error: --devices 96: tpu-v5p takes a power of two"},
      {"perf --machine hgx-h100 -n 16 --link 1GB/s,1us",
       "error: --link 1GB/s,1us: given with --machine hgx-h100"},
      {"perf --machine dgx-h100 --topology torus", "error: --topology torus: given with --machine"},
      {"perf --machine hgx-h100 --nccl-algo sharp",
       R"(error: --nccl-algo: "sharp" is no library algorithm, expected ring, tree, nvls, )"
       R"(nvlstree, pat, collnet or allpairs)"},
      {"perf --machine hgx-h100 --nccl-proto LL256",
       R"(error: --nccl-proto: "LL256" is no protocol, expected LL, LL128 or Simple)"},
      {"perf --machine mi300x --gpus-per-process 9",
       "error: --gpus-per-process 9: expected 1 to 8, the GPUs of one of the machine's nodes"},
      {"perf --machine mi300x --gpus-per-process 0",
       "error: --gpus-per-process 0: expected 1 to 8, the GPUs of one of the machine's nodes"},
      {"perf --graph-launch",
       "error: --graph-launch: machine '8 devices, ring, links 100GB/s,1us' has no fabric, "
       "expected a GPU preset or a machine file with one"},
      {"cases --order nccl_ring --out x --seed -1",
       "error: --seed: -1: expected a decimal integer from 0 to 2^64-1"},
      {"perf -f 9223372036854775808",
       "error: --stepfactor: 9223372036854775808: expected a decimal integer from -2^63 to 2^63-1"},
      {"cases --order nccl_ring --out x --nccl-chunk-bytes 2147483648",
       "error: --nccl-chunk-bytes"},
      {"conform --jax-version 0.11 " + std::string(SPMD_CONFORMANCE_DIR),
       R"(error: --jax-version: "0.11" is no JAX version the reference follows, expected 0.10 )"
       R"(or 0.12)"},
  };
  for (const auto& [arguments, expected] : cases) {
    const CommandResult result = run_binary(arguments);
    EXPECT_EQ(result.exit_code, 2) << arguments << ": " << result.output;
    EXPECT_EQ(result.output.rfind(expected, 0), 0u) << arguments << ": " << result.output;
    EXPECT_EQ(lines_of(result.output).size(), 1u) << arguments << ": " << result.output;
  }
}

// Paths that are no readable file: one line naming the path and what it is, exit 2, never a
// stream or filesystem exception.
TEST(CliErrors, PathsThatAreNoFileAreOneLineErrors) {
  const fs::path dir = scratch_folder("bad_paths");
  fs::create_directories(dir);
  const fs::path loop = dir / "loop";
  fs::create_symlink(loop, loop);  // a link to itself
  const std::string workload = std::string(SPMD_SOURCE_DIR) + "/docs/workloads/collectives.json";
  const std::string long_path = "/tmp/" + std::string(5000, 'a');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run --out " + dir.string() + " / " + workload,
       "error: /: cannot read the machine file (a folder, expected a file)"},
      {"run --out " + dir.string() + " /proc/self/mem " + workload,
       "error: /proc/self/mem: cannot read the machine file ("},
      {"run --out " + dir.string() + " " + loop.string() + " " + workload,
       "error: machine " + loop.string() + ": no such preset or file"},
      {"run --out " + dir.string() + " " + long_path + " " + workload,
       "error: machine /tmp/aaaa"},
      {"run --out " + dir.string() + " dgx-h100 /dev/zero",
       "error: /dev/zero: cannot read the workload file (a device or special file, expected a "
       "regular file)"},
      {"run --out " + dir.string() + " dgx-h100 " + dir.string(),
       "error: " + dir.string() + ": cannot read the workload file (a folder, expected a file)"},
  };
  for (const auto& [arguments, expected] : cases) {
    const CommandResult result = run_binary(arguments);
    EXPECT_EQ(result.exit_code, 2) << arguments.substr(0, 300) << ": " << result.output;
    EXPECT_EQ(result.output.rfind(expected, 0), 0u) << result.output.substr(0, 300);
    EXPECT_EQ(lines_of(result.output).size(), 1u) << result.output.substr(0, 300);
    EXPECT_LT(result.output.size(), 1000u) << "the long path is cut in the message";
  }
}

// An output that cannot be written in full is an error naming it (a full disk: /dev/full).
TEST(CliErrors, AnOutputFileThatCannotBeWrittenIsAnError) {
  EXPECT_EQ(test_errors::error_of([] { write_output_file("/dev/full", std::string(1 << 16, 'x')); })
                .rfind("/dev/full: cannot write this file (No space left on device)", 0),
            0u);
}

TEST(CliErrors, BadWorkloadFieldsAreNamed) {
  const fs::path dir = scratch_folder("bad_workload");
  fs::create_directories(dir);
  std::ofstream(dir / "w.json") << R"({"kind": "mlp_data_parallel", "layers": [4, -1],
                                       "batch_per_device": 2})";
  const CommandResult result = run_binary("run dgx-h100 " + (dir / "w.json").string());
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.output, "error: " + (dir / "w.json").string() +
                               ": workload.layers[1]: -1, expected a positive integer\n");
}

TEST(CliErrors, WorkloadFieldsAreRangeCheckedAndUnknownOnesRejected) {
  const fs::path dir = scratch_folder("workload_fields");
  fs::create_directories(dir);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"kind": "mlp_data_parallel", "layers": [4, 4], "batch_per_device": 2, "step": 2})",
       "workload.step: unknown field, expected one of kind, name, dtype, steps, layers, "
       "batch_per_device, overlap"},
      // 4294967297 = 2^32 + 1 was once read as 1 step.
      {R"({"kind": "mlp_data_parallel", "layers": [4, 4], "batch_per_device": 2,
           "steps": 4294967297})",
       "workload.steps: 4294967297, expected a positive integer up to 2147483647"},
      {R"({"kind": "collectives", "calls": [{"op": "all_reduce", "bytes": 1.5}]})",
       "workload.calls[0].bytes: 1.5, expected a positive integer"},
      {R"({"kind": "collectives", "calls": [{"op": "all_reduce", "byte": 8}]})",
       "workload.calls[0].byte: unknown field, expected one of op, bytes, dtype, nccl_algo, "
       "nccl_proto"},
      {R"({"kind": "mlp", "layers": [4, 4]})",
       "workload.kind: \"mlp\", expected mlp_data_parallel, transformer_layer, collectives or transformer"},
      {R"({"kind": "transformer_layer", "model_parallel": "8"})",
       "workload.model_parallel: \"8\" is a string, expected a positive integer"},
  };
  for (const auto& [json, expected] : cases) {
    std::ofstream(dir / "w.json") << json;
    const CommandResult result = run_binary("run dgx-h100 " + (dir / "w.json").string());
    EXPECT_EQ(result.exit_code, 2) << json;
    EXPECT_EQ(result.output, "error: " + (dir / "w.json").string() + ": " + expected + "\n");
  }
}

// ---- examples

TEST(ExamplesCommand, ListsEachExampleAndRunsOneByName) {
  const CommandResult list = run_binary("examples --list");
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_EQ(list.output.rfind("pmap_scale ", 0), 0u) << list.output;
  EXPECT_NE(list.output.find("\nmlp_training "), std::string::npos) << list.output;

  const CommandResult one = run_binary("examples pmap_normalize");
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(one.output.rfind("=== [jax.pmap docs / 001 §7]", 0), 0u) << one.output;
  EXPECT_EQ(one.output.find("=== [", 1), std::string::npos) << "only one example\n" << one.output;
}

TEST(ExamplesCommand, UnknownNameExitsWithTwoListingTheNames) {
  const CommandResult result = run_binary("examples pmap_scael");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.output.rfind("error: examples pmap_scael: no such example, expected one of "
                                "pmap_scale, pmap_in_out_axes, ",
                                0),
            0u)
      << result.output;
  EXPECT_EQ(lines_of(result.output).size(), 1u) << result.output;
}

// --ring lists the mesh's device ids: over a folder that also holds 8-device cases, a 4-device
// ring stops the run before any case runs, with one line naming the first such case.
TEST(ConformCommand, RingThatDoesNotFitACaseExitsWithTwoBeforeAnyCaseRuns) {
  const std::string cases = std::string(SPMD_SOURCE_DIR) + "/tests/conformance/cases";
  const CommandResult result = run_binary("conform --order nccl_ring --ring 0,2,1,3 -v " + cases);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_EQ(result.output, "error: " + cases +
                               "/err_smap_not_divisible.json: the case's mesh has 8 devices, "
                               "--ring 0,2,1,3 lists 4; expected a ring of all 8 devices\n");
}

// Every 4-device group size under the same ring: the whole mesh (pmap_psum_f32_rank_order) and
// axis_index_groups of two (pmap_psum_axis_index_groups), as README.md runs them.
TEST(ConformCommand, RingOfFourDevicesRunsCasesWithGroupsOfTwoAndFour) {
  const std::string cases = std::string(SPMD_SOURCE_DIR) + "/tests/conformance/cases";
  const CommandResult result =
      run_binary("conform --order nccl_ring --ring 0,2,1,3 -v " + cases +
                 "/pmap_psum_f32_rank_order.json " + cases + "/pmap_psum_axis_index_groups.json");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("2 passed, 0 failed"), std::string::npos) << result.output;
}

// ---- placement and algorithm notes

TEST(CliPlacement, BadPlacementsExitWithCodeTwoAndOneLineBeforeAnyOutput) {
  const std::string transformer =
      std::string(SPMD_SOURCE_DIR) + "/docs/workloads/transformer-layer.json";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"perf --placement data=x",
       "error: placement data=x: mesh Mesh('i': 8) has no axis data, expected i"},
      {"perf --placement devices:0,1",
       "error: placement devices:0,1: 2 devices for mesh Mesh('i': 8), expected one per mesh "
       "device (8)"},
      {"run dgx-h100-x4 " + transformer + " --placement data=x,model=y",
       "error: placement data=x,model=y: the machine hierarchical(4 nodes x 8) has no dimension "
       "x, expected inter or intra (or 0 to 1)"},
      {"scale --workload " + transformer + " --placement data=",
       "error: --placement data=: a mesh axis part names no machine dimension, expected "},
      {"demo --placement devices:0,0,1,2,3,4,5,6",
       "error: placement devices:0,0,1,2,3,4,5,6: device 0 is listed twice, expected each "
       "machine device at most once"},
  };
  for (const auto& [arguments, expected] : cases) {
    const CommandResult result = run_binary(arguments);
    EXPECT_EQ(result.exit_code, 2) << arguments << ": " << result.output;
    EXPECT_EQ(result.output.rfind(expected, 0), 0u) << arguments << ": " << result.output;
    EXPECT_EQ(lines_of(result.output).size(), 1u) << arguments << ": " << result.output;
  }
}

TEST(CliPlacement, AnAxisPlacedAlongTwoDimensionsRunsTheTorusAlgorithm) {
  const CommandResult result = run_binary(
      "perf --devices 16 --topology torus:4x4 --algorithm torus --placement i=y+x -e 1M -f 1024");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("(16 devices, placement i=y+x), with data"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("torus\n"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("note:"), std::string::npos) << result.output;
}

TEST(CliPlacement, AnAlgorithmThatCannotRunACallSaysWhyOnceOnStderr) {
  const std::string note = "note: halving_doubling cannot run all_reduce over 6 ranks; used ring";
  for (const std::string& arguments : std::vector<std::string>{
           "perf --devices 6 --algorithm halving_doubling -e 64",
           "perf --devices 16 --topology torus:4x4 --algorithm torus -e 64 --placement "
           "devices:1,0,2,3,4,5,6,7,8,9,10,11,12,13,14,15"}) {
    const CommandResult result = run_binary(arguments);  // four sizes, one note
    ASSERT_EQ(result.exit_code, 0) << result.output;
    std::size_t notes = 0;
    for (const std::string& line : lines_of(result.output)) notes += line.starts_with("note: ");
    EXPECT_EQ(notes, 1u) << arguments << ": " << result.output;
  }
  const CommandResult six = run_binary("perf --devices 6 --algorithm halving_doubling -e 64");
  EXPECT_NE(six.output.find(note + "\n"), std::string::npos) << six.output;
}

// issue 42: a device count given twice ran the same point again without a word.
TEST(CliBadInputs, ScaleRefusesADeviceCountGivenTwice) {
  const std::string workload = std::string(SPMD_SOURCE_DIR) + "/docs/workloads/collectives.json";
  const CommandResult result =
      run_binary("scale --workload " + workload + " --devices 8,16,8 --no-plot --out scale-dup");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_EQ(result.output,
            "error: --devices 8,16,8: 8 is given twice (entries 1 and 3), expected distinct device "
            "counts\n");
}

// issue 42: a run that cannot fit the host is refused from the estimate before anything is
// allocated (it grew to 7.9 GB before its out-of-memory message), in one line, exit 2.
TEST(CliBadInputs, RunsThatCannotFitTheHostAreRefusedBeforeAllocating) {
  const CommandResult cost_only = run_binary("perf -n 1000000000 --cost-only -b 8 -e 8");
  EXPECT_EQ(cost_only.exit_code, 2) << cost_only.output;
  EXPECT_EQ(cost_only.output.rfind("error: --devices 1000000000: 1000000000 simulated devices "
                                    "need about ", 0), 0u) << cost_only.output;
  EXPECT_NE(cost_only.output.find("expected at most about "), std::string::npos) << cost_only.output;
  EXPECT_EQ(std::count(cost_only.output.begin(), cost_only.output.end(), '\n'), 1)
      << cost_only.output;
  const CommandResult with_data = run_binary("perf -n 1000000000 -b 8 -e 8");
  EXPECT_EQ(with_data.exit_code, 2) << with_data.output;
  EXPECT_NE(with_data.output.find("of data"), std::string::npos) << with_data.output;
  EXPECT_NE(with_data.output.find("a smaller -e, or --cost-only (times without data)\n"), std::string::npos) << with_data.output;
  const std::string workload = std::string(SPMD_SOURCE_DIR) + "/docs/workloads/collectives.json";
  const CommandResult scale =
      run_binary("scale --workload " + workload + " --devices 8,1048576 --no-plot --out scale-big");
  EXPECT_EQ(scale.exit_code, 2) << scale.output;
  EXPECT_EQ(scale.output.rfind("error: --devices 8,1048576: 1048576 simulated "
                                                  "devices need about ", 0), 0u) << scale.output;
  const std::string machine = std::string(SPMD_SOURCE_DIR) + "/docs/machines/ring8.json";
  const CommandResult run = run_binary("run " + machine + " " + workload +
                                       " --devices 1000000 --out run-big");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_EQ(run.output.rfind("error: --devices 1000000: 1000000 simulated "
                                                "devices need about ", 0), 0u) << run.output;
}

TEST(CliHelp, EveryCommandHasHelp) {
  for (const std::string command : {"demo", "run", "perf", "scale", "validate", "conform", "examples"}) {
    const CommandResult result = run_binary(command + " --help");
    EXPECT_EQ(result.exit_code, 0) << command;
    EXPECT_NE(result.output.find("Usage"), std::string::npos) << command << result.output;
  }
}

// ---- sharding

TEST(ShardingCommand, DrawsTheBlocksEachDeviceHolds) {
  const CommandResult result =
      run_binary("sharding --mesh 2x4 --names data,model --spec 'data,None' --shape 16,8");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output.rfind("array 16x8, P('data', None) on Mesh('data': 2, 'model': 4):\n"
                                "+----------+\n|          |\n| 0,1,2,3  |\n",
                                0),
            0u)
      << result.output;
  EXPECT_NE(result.output.find("| 4,5,6,7  |"), std::string::npos) << result.output;
}

TEST(ShardingCommand, BadShardingsAreOneLineErrorsNamingTheFlag) {
  const std::string mesh = "sharding --mesh 2x4 --names data,model ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {mesh + "--spec data,None,model --shape 16,8",
       "error: --spec: P('data', None, 'model') has 3 entries, expected at most 2, the rank of "
       "--shape 16,8"},
      {mesh + "--spec data --shape 16,8 --devices 6",
       "error: --devices: 6, expected the 8 devices of --mesh 2x4"},
      {"sharding --mesh 2x4 --names data --shape 16",
       "error: --names: 'data' has 1 name, expected one per axis of --mesh 2x4: 2"},
      {mesh + "--spec x --shape 16,8", "error: --spec: Resource axis: x of P('x') is not found in "
                                       "mesh: ('data', 'model')"},
      {mesh + "--spec data --shape 15,8",
       "error: --shape: dimension 0 of 15,8 is 15, split over mesh axes ('data',) of 2 devices "
       "by --spec P('data'), expected a multiple of 2"},
      {mesh + "--spec data,data --shape 16,8",
       "error: --spec: A single NamedSharding spec specification can map every mesh axis to at "
       "most one positional dimension, but P('data', 'data') has duplicate entries for `data`"},
      {mesh + "--spec data --shape 2,2,2", "error: --shape: 2,2,2 has rank 3, expected rank 1 or 2"},
      {mesh + "--spec '(data' --shape 16", "error: --spec: '(data', expected one entry per"},
      {"sharding --mesh 2x --names a,b --shape 4", "error: --mesh: '2x', expected positive axis"},
      {"run dgx-h100 " + std::string(SPMD_SOURCE_DIR) +
           "/docs/workloads/collectives.json --show-sharding",
       "error: --show-sharding: " + std::string(SPMD_SOURCE_DIR) +
           "/docs/workloads/collectives.json is a workload file, expected an HLO module"},
  };
  for (const auto& [arguments, expected] : cases) {
    const CommandResult result = run_binary(arguments);
    EXPECT_EQ(result.exit_code, 2) << arguments << ": " << result.output;
    EXPECT_EQ(result.output.rfind(expected, 0), 0u) << arguments << ": " << result.output;
    EXPECT_EQ(lines_of(result.output).size(), 1u) << arguments << ": " << result.output;
  }
}

// The Megatron program compiled by JAX (tests/hlo/programs): w_in is P(None, 'model') on the
// (data 2, model 4) mesh, each column block held by a device and its data replica.
TEST(RunCommand, ShowShardingDrawsAnHloModulesInputs) {
  const fs::path dir = scratch_folder("run_show_sharding");
  const CommandResult result =
      run_binary("run dgx-h100 " + std::string(SPMD_SOURCE_DIR) +
                 "/tests/hlo/programs/megatron_sequence_parallel.hlo --show-sharding --out " +
                 dir.string());
  EXPECT_EQ(result.exit_code, 0) << result.output;
  for (const char* expected :
       {"sharding (device ids are partition ids):\n",
        "input 0 (x): f32[4,16,32] {devices=[2,4,1]<=[8]}: rank 3, not drawn",
        "input 1 (w_in): f32[32,128] {devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}\n",
        "|          0,4          |          1,5          |          2,6          |          3,7",
        "input 2 (w_out): f32[128,32]", "|  3,7  |\n",
        "output 0: f32[2,4,32] per device, no sharding in the module's text, not drawn"}) {
    EXPECT_NE(result.output.find(expected), std::string::npos) << expected << "\n" << result.output;
  }
}

}  // namespace
}  // namespace spmd
