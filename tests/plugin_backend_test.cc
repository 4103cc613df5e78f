// Collective library plugins (backends/plugin/spmdsim_plugin.h): the example thread_ring plugin
// gives the reference's bits in gloo_ring_chunked's order, on random buffers and on every conformance
// case through `spmdsim conform --backend-plugin`; its order-bug twin is rejected with the first
// differing element; a plugin that cannot be loaded, fails or hangs ends the run with exit code 2
// and one line saying why.

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>

#include "backends/plugin/plugin_collectives.h"
#include "backends/plugin/plugin_host.h"
#include "backends/plugin/plugin_library.h"
#include "conformance/conformance_runner.h"
#include "reference/array_difference.h"
#include "reference/fold_reduce.h"
#include "support/random_array.h"
#include "tests/spmdsim_binary.h"

namespace spmd {
namespace {

const std::string kCases = std::string(SPMD_SOURCE_DIR) + "/tests/conformance/cases";
const std::string kOrderCases = std::string(SPMD_SOURCE_DIR) + "/tests/conformance/order_cases";

// The order cases of one algorithm, as command-line arguments.
std::string order_case_files(const std::string& algorithm) {
  std::string files;
  for (const std::string& file : conformance::find_case_files({kOrderCases})) {
    const std::string name = std::filesystem::path(file).filename().string();
    if (name.starts_with(algorithm + "_n")) files += " " + file;
  }
  return files;
}

int line_count(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// ---- thread_ring through the CLI

TEST(ThreadRingPlugin, passes_every_public_case) {
  const CommandResult result =
      run_binary(std::string("conform --backend-plugin ") + SPMD_THREAD_RING_PLUGIN + " " + kCases);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find(" passed, 0 failed"), std::string::npos) << result.output;
}

// Every order case: gloo_ring_chunked's against JAX's files, the others against the reference
// folding in gloo_ring_chunked's order (the plugin's native order).
TEST(ThreadRingPlugin, passes_every_order_case_in_its_native_order_gloo_ring_chunked) {
  const CommandResult result = run_binary(std::string("conform --backend-plugin ") +
                                          SPMD_THREAD_RING_PLUGIN + " " + kOrderCases);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("96 passed, 0 failed"), std::string::npos) << result.output;
}

TEST(ThreadRingPlugin, passes_gloo_ring_chunked_order_cases_against_jax_outputs) {
  const CommandResult result =
      run_binary(std::string("conform --verbose --backend-plugin ") + SPMD_THREAD_RING_PLUGIN +
                 order_case_files("gloo_ring_chunked"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("6 passed, 0 failed"), std::string::npos) << result.output;
  // Compared with JAX's files directly: no note about another order.
  EXPECT_EQ(result.output.find("note:"), std::string::npos) << result.output;
}

TEST(ThreadRingPlugin, fails_under_an_order_it_does_not_fold_in) {
  const CommandResult result =
      run_binary(std::string("conform --order mpi_ring --backend-plugin ") +
                 SPMD_THREAD_RING_PLUGIN + order_case_files("mpi_ring"));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("FAIL mpi_ring_n6_float32_at_6: output 0 element (2,)"),
            std::string::npos)
      << result.output;
}

TEST(ThreadRingOrderBugPlugin, is_rejected_naming_the_first_differing_element) {
  const CommandResult result = run_binary(std::string("conform --backend-plugin ") +
                                          SPMD_THREAD_RING_ORDER_BUG_PLUGIN +
                                          order_case_files("gloo_ring_chunked"));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  // The case's data and JAX's file are fixed, so is the first difference (2 ranks add the same
  // two numbers either way: only the larger groups can tell).
  EXPECT_NE(result.output.find("FAIL gloo_ring_chunked_n3_float32_below_1149: output 0 element "
                               "(9,) is -5.96046448e-08, expected 0 (JAX's expected output)\n"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("2 passed, 4 failed"), std::string::npos) << result.output;
}

// ---- Plugins that cannot be loaded or break

// Runs conform on one small psum case with the broken plugin set to `mode` (its environment
// variable, inherited by spmdsim).
CommandResult run_broken_plugin(const std::string& mode, const std::string& plugin,
                                const std::string& extra_flags = "") {
  setenv("SPMDSIM_BROKEN_PLUGIN", mode.c_str(), 1);
  CommandResult result = run_binary("conform " + extra_flags + " --backend-plugin " + plugin +
                                    " " + kCases + "/pmap_psum_f32_rank_order.json");
  unsetenv("SPMDSIM_BROKEN_PLUGIN");
  return result;
}

// Exit code 2 and one line: "error: " and `expected` in it.
void expect_one_line_error(const CommandResult& result, const std::string& expected) {
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_EQ(line_count(result.output), 1) << result.output;
  EXPECT_TRUE(result.output.starts_with("error: --backend-plugin ") ||
              result.output.starts_with("error: plugin 'broken': "))
      << result.output;
  EXPECT_NE(result.output.find(expected), std::string::npos) << result.output;
}

TEST(PluginErrors, a_missing_file_is_named) {
  expect_one_line_error(run_broken_plugin("", "/nonexistent/libmine.so"),
                        "/nonexistent/libmine.so: no such file, expected a shared library");
}

TEST(PluginErrors, a_file_the_loader_refuses_gives_its_reason) {
  // A text file is no shared library: dlerror says so ("invalid ELF header" on glibc).
  expect_one_line_error(run_broken_plugin("", kCases + "/pmap_axis_index.json"),
                        "cannot load it: ");
}

TEST(PluginErrors, a_library_without_the_entry_point_is_named) {
  expect_one_line_error(run_broken_plugin("", SPMD_NO_ENTRY_PLUGIN),
                        "no function spmdsim_plugin_entry in it");
}

TEST(PluginErrors, an_abi_version_mismatch_names_both_versions) {
  expect_one_line_error(run_broken_plugin("wrong_abi", SPMD_BROKEN_PLUGIN),
                        "built for plugin ABI version 2, this spmdsim speaks version 1");
}

TEST(PluginErrors, a_null_function_is_named) {
  expect_one_line_error(run_broken_plugin("null_function", SPMD_BROKEN_PLUGIN),
                        "plugin 'broken' has permute = NULL");
}

TEST(PluginErrors, an_entry_point_that_refuses_gives_its_message) {
  expect_one_line_error(run_broken_plugin("refuses", SPMD_BROKEN_PLUGIN),
                        "spmdsim_plugin_entry returned NULL: broken plugin: this machine has no "
                        "network");
}

TEST(PluginErrors, an_unknown_native_order_is_named) {
  expect_one_line_error(run_broken_plugin("bad_order", SPMD_BROKEN_PLUGIN),
                        "native_order: reduction algorithm 'nccl_rng' is unknown");
}

TEST(PluginErrors, a_failing_call_ends_the_run_with_its_message) {
  expect_one_line_error(run_broken_plugin("fails", SPMD_BROKEN_PLUGIN),
                        "all_reduce of float32[3] on each of 4 ranks (devices 0,1,2,3) (sum) "
                        "failed on rank 1: returned 3: broken plugin: rank 1 refuses to reduce");
}

TEST(PluginErrors, a_call_that_never_returns_times_out) {
  expect_one_line_error(run_broken_plugin("hangs", SPMD_BROKEN_PLUGIN, "--plugin-timeout-s 1"),
                        "did not return within 1 s on rank(s) 0, expected every rank to return "
                        "once all 4 had called it");
}

TEST(PluginErrors, a_plugin_and_another_backend_are_refused) {
  const CommandResult result = run_binary(std::string("conform --backend sim --backend-plugin ") +
                                          SPMD_THREAD_RING_PLUGIN + " " + kCases);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("with --backend sim, expected one of the two"), std::string::npos)
      << result.output;
}

TEST(PluginErrors, a_timeout_without_a_plugin_is_refused) {
  const CommandResult result = run_binary("conform --plugin-timeout-s 5 " + kCases);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--plugin-timeout-s requires --backend-plugin"), std::string::npos)
      << result.output;
}

TEST(PluginErrors, bool_results_that_are_not_0_or_1_are_refused) {
  setenv("SPMDSIM_BROKEN_PLUGIN", "bad_bool", 1);
  plugin::PluginCollectives library(plugin::load_plugin_library(SPMD_BROKEN_PLUGIN),
                                    std::chrono::seconds(10));
  const std::vector<int> devices = {0, 1};
  const std::vector<Array> inputs(2, Array(DType::bool_, {3}));
  try {
    library.all_gather(GroupBuffers{devices, inputs});
    ADD_FAILURE() << "the plugin's bool bytes were accepted";
  } catch (const plugin::PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0's result has byte 7 in bool element 0"),
              std::string::npos)
        << e.what();
  }
  unsetenv("SPMDSIM_BROKEN_PLUGIN");
}

// ---- The host's combine()

TEST(PluginHost, combine_refuses_numbers_outside_the_enums) {
  float in = 1, inout = 2;
  EXPECT_NE(plugin::host_table().combine(static_cast<spmdsim_dtype>(42), SPMDSIM_SUM, &in, &inout,
                                         1),
            0);
  EXPECT_NE(plugin::take_error_message().find("combine(dtype 42, op 0)"), std::string::npos);
  EXPECT_EQ(inout, 2);
}

// ---- thread_ring in-process, against the reference

std::shared_ptr<const plugin::PluginLibrary> thread_ring() {
  static const auto library = plugin::load_plugin_library(SPMD_THREAD_RING_PLUGIN);
  return library;
}

std::vector<int> first_devices(int n) {
  std::vector<int> devices;
  for (int d = 0; d < n; ++d) devices.push_back(d);
  return devices;
}

// Sums in every dtype, max and min, over groups of 1..8 and buffers from one element to past the
// 256-element chunks' minimum (2n chunks): the plugin's ring gives the reference's
// gloo_ring_chunked bits on every rank.
RC_GTEST_PROP(ThreadRingPluginProperty, all_reduce_is_the_reference_in_gloo_ring_chunked_order,
              ()) {
  const int n = *rc::gen::inRange(1, 9);
  const std::int64_t count = *rc::gen::inRange<std::int64_t>(1, 5000);
  const DType dtype =
      *rc::gen::elementOf(std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes) - 1));
  const ReduceOp op = *rc::gen::element(ReduceOp::sum, ReduceOp::max, ReduceOp::min);
  const std::vector<Array> inputs =
      random_per_device(dtype, {count}, n, *rc::gen::arbitrary<std::uint64_t>());
  const ReductionOrder order{.algorithm = ReductionAlgorithm::gloo_ring_chunked};
  const Array expected = all_reduce(inputs, op, order);

  plugin::PluginCollectives library(thread_ring(), std::chrono::seconds(60));
  const std::vector<int> devices = first_devices(n);
  const std::vector<Array> results = library.all_reduce(GroupBuffers{devices, inputs}, op);
  for (int r = 0; r < n; ++r) {
    RC_ASSERT(!first_difference(results[static_cast<std::size_t>(r)], expected));
  }
}

RC_GTEST_PROP(ThreadRingPluginProperty,
              reduce_scatter_is_the_reference_in_gloo_ring_chunked_order, ()) {
  const int n = *rc::gen::inRange(1, 9);
  const std::int64_t block = *rc::gen::inRange<std::int64_t>(1, 100);
  const DType dtype = *rc::gen::element(DType::float32, DType::float16, DType::bfloat16);
  const std::vector<Array> inputs =
      random_per_device(dtype, {n * block}, n, *rc::gen::arbitrary<std::uint64_t>());
  const ReductionOrder order{.algorithm = ReductionAlgorithm::gloo_ring_chunked};

  plugin::PluginCollectives library(thread_ring(), std::chrono::seconds(60));
  const std::vector<int> devices = first_devices(n);
  const std::vector<Array> results =
      library.reduce_scatter(GroupBuffers{devices, inputs}, ReduceOp::sum);
  for (int r = 0; r < n; ++r) {
    std::vector<Array> blocks;
    for (const Array& input : inputs) blocks.push_back(slice(input, 0, r * block, (r + 1) * block));
    const Array expected =
        reduce_with_plan(blocks, ReduceOp::sum, order.reduce_scatter_plan(n, r, block), order);
    RC_ASSERT(!first_difference(results[static_cast<std::size_t>(r)], expected));
  }
}

}  // namespace
}  // namespace spmd
