// `spmdsim calibrate` (cli/calibrate_command.h): from outputs the model itself wrote with known
// measured values, it finds those values again; the machine file it writes makes `perf --compare`
// print the errors it reported and scales with -n; and its bad inputs are one-line errors.

#include "cli/calibrate_command.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cost_model/collective_timing.h"
#include "sim/machine_presets.h"
#include "support/units.h"
#include "tests/spmdsim_binary.h"

namespace spmd {
namespace {

namespace fs = std::filesystem;

fs::path scratch_folder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("spmdsim_calibrate_test_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// What a machine made with `measured` would print under all_reduce_perf on `ranks` ranks, one
// process per GPU, from 8 B to 8 GiB by factors of 4: its rank lines (8 to a host) and each
// size's time as nccl-tests rounds it, to 0.01 us.
std::string model_output(const std::string& preset, int ranks,
                         const cost_model::MeasuredTiming& measured) {
  cost_model::Fabric fabric = *machine_preset_with_devices(preset, ranks).fabric;
  fabric.measured = measured;
  std::string text =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 4(factor) warmup iters: 5 "
      "iters: 20 agg iters: 1 validation: 1 graph: 0\n";
  for (int rank = 0; rank < ranks; ++rank) {
    text += fmt::format("#  Rank {:3} Group  0 Pid {} on node-{} device  {} [0x01] GPU\n", rank,
                        1000 + rank, rank / 8, rank % 8);
  }
  text += "# Collective test starting: all_reduce_perf\n";
  for (std::int64_t bytes = 8; bytes <= (std::int64_t{8} << 30); bytes *= 4) {
    const double time_us =
        static_cast<double>(
            cost_model::time_collective(fabric, {.bytes = bytes, .ranks = ranks}).time_ps) /
        1e6;
    text += fmt::format(
        "{:>12} {:>13}     float     sum      -1 {:>8.2f}    0.00    0.00      0 "
        "{:>8.2f}    0.00    0.00      0\n",
        bytes, bytes / 4, time_us, time_us);
  }
  return text;
}

std::string write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}

// The line of `output` that starts with `start` (after its indent), split in words.
std::vector<std::string> words_of_line(const std::string& output, const std::string& start) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.find_first_not_of(' ') == line.find(start)) {
      std::istringstream in(line);
      std::vector<std::string> words;
      for (std::string word; in >> word;) words.push_back(word);
      return words;
    }
  }
  return {};
}

// One output on one node (8 H100) pins the launch latency and the scale-up links' share; one
// across four nodes the network's latency and share. Made with values far from the documented
// ones, they are found again to the outputs' rounding, and every size is then within 0.5%.
TEST(CalibrateCommand, FindsTheValuesTheOutputsWereMadeWith) {
  const cost_model::MeasuredTiming truth{.launch_latency_ps = 40'000'000,
                                         .network_latency_ps = 30'000'000,
                                         .network_efficiency = 0.6,
                                         .scale_up_efficiency = 0.5};
  const fs::path dir = scratch_folder("recovers");
  const CalibrateOptions options{
      .machine = "hgx-h100",
      .outputs = {write(dir / "one_node.txt", model_output("hgx-h100", 8, truth)),
                  write(dir / "four_nodes.txt", model_output("hgx-h100", 32, truth))},
      .output_file = (dir / "fitted.json").string()};
  std::ostringstream out;
  ASSERT_EQ(run_calibrate_command(options, out), 0);
  const nlohmann::json fabric = nlohmann::json::parse(std::ifstream(dir / "fitted.json"))["fabric"];
  // Within 0.1 us: the outputs' times are rounded to 0.01 us.
  EXPECT_NEAR(parse_duration_ps(fabric["launch_latency"].get<std::string>(), "launch"), 40e6, 1e5)
      << out.str();
  EXPECT_NEAR(parse_duration_ps(fabric["network_latency"].get<std::string>(), "network"), 30e6, 1e5)
      << out.str();
  EXPECT_NEAR(fabric["network_efficiency"].get<double>(), 0.6, 0.002) << out.str();
  EXPECT_NEAR(fabric["scale_up_efficiency"].get<double>(), 0.5, 0.002) << out.str();
  for (const std::string& file : options.outputs) {
    const std::vector<std::string> row = words_of_line(out.str(), file);
    ASSERT_EQ(row.size(), 6u) << out.str();
    // sizes, median before and after, p90 before and after
    EXPECT_LT(std::stod(row[3]), 0.5) << out.str();
    EXPECT_LT(std::stod(row[5]), 0.5) << out.str();
    EXPECT_GT(std::stod(row[4]), 10.0) << out.str();  // the documented values were far off
  }
}

// Across nodes alone a network hop raises the same floor as the launch, and the NICs bound the
// rate: the fit takes the launch latency and the NICs' share, and leaves the network hop and the
// scale-up share as documented unless --fit names them.
TEST(CalibrateCommand, OutputsAcrossNodesAloneLeaveTheNetworkHopAndScaleUpShare) {
  const fs::path dir = scratch_folder("two_nodes_only");
  const CalibrateOptions options{
      .machine = "mi300x",
      .outputs = {write(dir / "two_nodes.txt",
                        model_output("mi300x", 16, {.launch_latency_ps = 200'000'000}))}};
  std::ostringstream out;
  ASSERT_EQ(run_calibrate_command(options, out), 0);
  const std::vector<std::string> launch = words_of_line(out.str(), "launch_latency");
  ASSERT_EQ(launch.size(), 5u) << out.str();  // name, documented and fitted with their units
  EXPECT_NEAR(std::stod(launch[3]), 200.0, 0.1) << out.str();
  for (const std::string field : {"network_latency", "scale_up_efficiency"}) {
    EXPECT_NE(out.str().find(field), std::string::npos);
    const std::vector<std::string> words = words_of_line(out.str(), field);
    ASSERT_FALSE(words.empty()) << out.str();
    EXPECT_EQ(words.back(), "fitted)") << out.str();  // "(not fitted)"
  }
  CalibrateOptions named = options;
  named.fit = {"network_latency"};
  std::ostringstream named_out;
  ASSERT_EQ(run_calibrate_command(named, named_out), 0);
  EXPECT_NE(words_of_line(named_out.str(), "network_latency").back(), "fitted)") << named_out.str();
  EXPECT_EQ(words_of_line(named_out.str(), "launch_latency").back(), "fitted)") << named_out.str();
}

// The machine file it writes is what perf then runs: beside the same output perf prints the
// median and p90 calibrate reported after the fit, and -n scales it by whole nodes.
TEST(CalibrateCommand, WritesAMachineThatPerfRunsAtOtherScales) {
  const fs::path dir = scratch_folder("perf");
  const std::string output =
      write(dir / "two_nodes.txt", model_output("mi300x", 16, {.launch_latency_ps = 200'000'000}));
  const std::string machine = (dir / "mi300x-calibrated.json").string();
  const CommandResult calibrated =
      run_binary("calibrate --machine mi300x " + output + " -o " + machine);
  ASSERT_EQ(calibrated.exit_code, 0) << calibrated.output;
  const std::vector<std::string> row = words_of_line(calibrated.output, output);
  ASSERT_EQ(row.size(), 6u) << calibrated.output;
  const CommandResult beside = run_binary("perf --machine " + machine + " --compare " + output);
  ASSERT_EQ(beside.exit_code, 0) << beside.output;
  EXPECT_NE(beside.output.find(fmt::format("median |error| {}, p90 |error| {}", row[3], row[5])),
            std::string::npos)
      << calibrated.output << beside.output;
  const CommandResult scaled = run_binary("perf --machine " + machine + " -n 64 --cost-only");
  EXPECT_EQ(scaled.exit_code, 0) << scaled.output;
  EXPECT_NE(scaled.output.find("(64 devices"), std::string::npos) << scaled.output;
}

// Each bad input is one line naming what is wrong, with exit code 2.
TEST(CalibrateCommand, BadInputIsOneLineNamingIt) {
  const fs::path dir = scratch_folder("errors");
  const std::string one_node = write(dir / "one_node.txt", model_output("hgx-h100", 8, {}));
  const std::string bare =
      write(dir / "bare.txt",
            "        1024           256     float     sum      -1    25.10    0.04    0.04      0 "
            "   24.90    0.04    0.04      0\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"calibrate --machine hgx-h100 --fit network_latency " + one_node,
       "error: --fit network_latency: no output spans several nodes; expected an output measured "
       "across nodes"},
      {"calibrate --machine hgx-h100 --fit launch " + one_node,
       "error: --fit launch: expected some of launch_latency, network_latency, "
       "network_efficiency, scale_up_efficiency"},
      {"calibrate --machine hgx-h100 --op all_reduce " + bare,
       "error: " + bare + ": no \"#  Rank\" lines; expected the output as nccl-tests prints it"},
      {"calibrate --machine hgx-h100 " + bare,
       "error: " + bare +
           ": the output names no test (all_reduce_perf, ...); expected --op to say which "
           "collective it measured"},
      {"calibrate --machine hgx-h100 --op all_gather " + one_node,
       "error: --op all_gather: " + one_node +
           " is all_reduce_perf's output; expected --op all_reduce or no --op"},
      {"calibrate --machine " + std::string(SPMD_SOURCE_DIR) + "/docs/machines/ring8.json " +
           one_node,
       "error: --machine " + std::string(SPMD_SOURCE_DIR) + "/docs/machines/ring8.json: no fabric"},
      {"calibrate --machine hgx-h100 " + (dir / "none.txt").string(),
       "error: " + (dir / "none.txt").string() + ": cannot read the nccl-tests output"},
      {"calibrate --machine hgx-h100", "error: outputs is required"},
  };
  for (const auto& [arguments, expected] : cases) {
    const CommandResult result = run_binary(arguments);
    EXPECT_EQ(result.exit_code, 2) << arguments << ": " << result.output;
    EXPECT_EQ(result.output.rfind(expected, 0), 0u) << arguments << ": " << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1)
        << arguments << ": " << result.output;
  }
}

}  // namespace
}  // namespace spmd
