// Sizes, counts and times that would overflow 64 bits, and JSON files that would exhaust memory
// or the stack, are one-line errors naming what overflowed (issue 16's measured cases: each of
// these once wrapped, truncated or was silently accepted). The checked-math helpers agree with
// 128-bit arithmetic and throw exactly when the result leaves int64.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <functional>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "cost_model/link_time.h"
#include "cost_model/roofline.h"
#include "reference/array.h"
#include "reference/mesh.h"
#include "conformance/conformance_case.h"
#include "conformance/conformance_runner.h"
#include "reference/input_file.h"
#include "support/checked_math.h"
#include "support/json_reader.h"
#include "support/wide_int.h"
#include "tests/error_of.h"
#include "tests/spmdsim_binary.h"

namespace spmd {
namespace {

using test_errors::error_of;
using ::testing::HasSubstr;

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

bool fits_int64(WideInt value) { return value >= kMin && value <= kMax; }

// Operands from the whole range, and near the boundaries where overflow starts.
rc::Gen<std::int64_t> any_int64() {
  return rc::gen::oneOf(rc::gen::arbitrary<std::int64_t>(),
                        rc::gen::inRange<std::int64_t>(-(std::int64_t{1} << 32), std::int64_t{1} << 32),
                        rc::gen::element(kMax, kMin, std::int64_t{0}, std::int64_t{-1},
                                         std::int64_t{1} << 62, std::int64_t{3037000500}));
}

RC_GTEST_PROP(CheckedMath, checked_multiply_is_the_product_or_throws_when_it_leaves_int64, ()) {
  const std::int64_t a = *any_int64(), b = *any_int64();
  const WideInt exact = static_cast<WideInt>(a) * b;
  if (fits_int64(exact)) {
    RC_ASSERT(checked_multiply(a, b, "product") == static_cast<std::int64_t>(exact));
  } else {
    RC_ASSERT_THROWS_AS(checked_multiply(a, b, "product"), Error);
  }
}

RC_GTEST_PROP(CheckedMath, checked_add_is_the_sum_or_throws_when_it_leaves_int64, ()) {
  const std::int64_t a = *any_int64(), b = *any_int64();
  const WideInt exact = static_cast<WideInt>(a) + b;
  if (fits_int64(exact)) {
    RC_ASSERT(checked_add(a, b, "sum") == static_cast<std::int64_t>(exact));
  } else {
    RC_ASSERT_THROWS_AS(checked_add(a, b, "sum"), Error);
  }
}

TEST(CheckedMath, overflow_message_names_what_and_the_operands) {
  EXPECT_EQ(error_of([] { checked_multiply(std::int64_t{1} << 40, std::int64_t{1} << 40, "bytes"); }),
            "bytes: 1099511627776 * 1099511627776 is beyond the largest 64-bit integer "
            "9223372036854775807");
  EXPECT_EQ(error_of([] { checked_int(std::int64_t{4294967297}, "format"); }),
            "format: 4294967297 is beyond the 32-bit integer range [-2147483648, 2147483647]");
}

// issue 16: collective_cost of [2^40, 2^40] took 0 ps (the element count wrapped to 0).
TEST(Hardening, element_count_beyond_int64_is_an_error_naming_the_shape) {
  EXPECT_THAT(error_of([] { element_count({std::int64_t{1} << 40, std::int64_t{1} << 40}); }),
              HasSubstr("element count of shape (1099511627776, 1099511627776)"));
}

TEST(Hardening, mesh_of_more_devices_than_an_int_is_an_error) {
  EXPECT_EQ(error_of([] { Mesh({65536, 65536}, {"x", "y"}); }),
            "mesh.shape (65536, 65536): more than 2147483647 devices, expected at most that");
}

// issue 16: peak_flops "1FLOP/s" gave the same step time as 100 TFLOP/s (the cast of a time
// beyond int64 is undefined), and charge_compute(1e300) added no time.
TEST(Hardening, roofline_time_beyond_int64_is_an_error) {
  EXPECT_THAT(error_of([] { cost_model::compute_time_ps(1e12, 0, 1.0, 1); }),
              HasSubstr("compute time in ps of 1000000000000 FLOPs at 1 FLOP/s"));
  EXPECT_THAT(error_of([] { cost_model::compute_time_ps(1e300, 0, 1e14, 1); }),
              HasSubstr("beyond the largest 64-bit integer"));
  EXPECT_EQ(cost_model::compute_time_ps(1e6, 0, 1e14, 1), 10'000);  // 1e6 / 1e14 s = 10^4 ps
}

// issue 16: memory_bandwidth "1B/s" showed less time than 3 TB/s; --link 1B/s stopped growing
// past 16 MiB; a latency of 2^63-1 ps reported 0 us.
TEST(Hardening, link_time_beyond_int64_is_an_error) {
  EXPECT_EQ(cost_model::serialization_ps(9'223'372, 1), 9'223'372'000'000'000'000);
  EXPECT_THAT(error_of([] { cost_model::serialization_ps(std::int64_t{16} << 20, 1); }),
              HasSubstr("16777216 bytes at 1 B/s take more than 2^63 ps"));
  EXPECT_THAT(error_of([] { cost_model::transfer_time_ps(1, kMax, 1'000'000'000'000); }),
              HasSubstr("transfer time in ps"));
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// issue 16: duplicate keys were accepted (the last won).
TEST(Hardening, duplicate_json_key_is_an_error) {
  const std::string path = write_file("spmd_hardening_duplicate.json", R"({"a": 1, "b": {"c": 2, "c": 3}})");
  EXPECT_EQ(error_of([&] { parse_json_file(path); }),
            path + ": not valid JSON (key \"c\" appears twice in one object, expected unique keys)");
  // The same key in two objects is fine.
  EXPECT_NO_THROW(parse_json_file(write_file("spmd_hardening_two_objects.json",
                                             R"({"a": {"c": 1}, "b": {"c": 2}})")));
}

// issue 16: 200,000 nested arrays overflowed the stack while formatting the error.
TEST(Hardening, json_nested_deeper_than_the_limit_is_an_error) {
  const std::string deep(200'000, '[');
  const std::string path = write_file("spmd_hardening_deep.json", deep + std::string(200'000, ']'));
  EXPECT_EQ(error_of([&] { parse_json_file(path); }),
            path + ": not valid JSON (nested deeper than 256 levels, expected at most that)");
  const std::string ok(kMaxJsonDepth, '[');
  EXPECT_NO_THROW(parse_json_file(
      write_file("spmd_hardening_ok_depth.json", ok + std::string(kMaxJsonDepth, ']'))));
}

TEST(Hardening, json_file_larger_than_the_limit_is_an_error) {
  const std::string path = write_file("spmd_hardening_large.json",
                                      "[" + std::string(kMostInputFileBytes, ' ') + "]");
  EXPECT_EQ(error_of([&] { parse_json_file(path); }),
            path + ": cannot read this file (67108866 bytes, expected at most 67108864 bytes)");
  std::filesystem::remove(path);
}

// issue 16: a 10 MB string was echoed into a 10 MB error line.
TEST(Hardening, long_values_and_keys_are_cut_in_messages) {
  const std::string long_key(10'000, 'k');
  const nlohmann::json document = {{long_key, 1}};
  const std::string message =
      error_of([&] { JsonValue(document, "case").require_object({"format"}); });
  EXPECT_LT(message.size(), 200u) << message;
  EXPECT_THAT(message, HasSubstr("(10000 characters)"));
  const nlohmann::json value = std::string(10'000, 'v');
  EXPECT_LT(error_of([&] { JsonValue(value, "case").integer(); }).size(), 200u);
}

// A public pmap case (one input, one output, a 4-device mesh) with `change` applied, written
// beside copies of its .npy files; returns the case's error when loaded.
std::string error_of_changed_case(const std::function<void(nlohmann::json&)>& change) {
  namespace fs = std::filesystem;
  const fs::path source = fs::path(SPMD_CONFORMANCE_DIR);
  const fs::path folder = fs::temp_directory_path() / "spmd_hardening_case";
  fs::create_directories(folder);
  for (const char* file : {"pmap_all_to_all_tiled.in0.npy", "pmap_all_to_all_tiled.out0.npy"}) {
    fs::copy_file(source / file, folder / file, fs::copy_options::overwrite_existing);
  }
  nlohmann::json c = nlohmann::json::parse(std::ifstream(source / "pmap_all_to_all_tiled.json"));
  change(c);
  const std::string path = (folder / "case.json").string();
  std::ofstream(path) << c.dump();
  return error_of([&] { conformance::load_case(path); });
}

// issue 16: what the case reader accepted and ignored, or failed on with an internal error.
TEST(Hardening, case_fields_the_runner_would_ignore_are_errors) {
  EXPECT_THAT(error_of_changed_case([](nlohmann::json& c) { c["mesh"]["shape"] = {1000000}; }),
              HasSubstr("mesh.shape: [1000000], expected [4]: a pmap case's mesh is its mapped "
                        "axis, of size 4 in the inputs"));
  // in_axes / out_axes of another length are the program's error since issue 42
  // (conformance_runner_test.cc, WrongLengthInAxesAndOutAxesAreProgramErrors).
  EXPECT_THAT(error_of_changed_case([](nlohmann::json& c) { c["outputs"] = {""}; }),
              HasSubstr("outputs[0]: \"\" is not a reference, expected inN or sK"));
  EXPECT_THAT(
      error_of_changed_case([](nlohmann::json& c) { c["expected"] = {{"error", ""}}; }),
      HasSubstr("expected.error: \"\", expected one line: why JAX rejects the case"));
}

TEST(Hardening, a_folder_without_cases_is_an_error) {
  const std::filesystem::path empty = std::filesystem::temp_directory_path() / "spmd_no_cases";
  std::filesystem::create_directories(empty);
  EXPECT_EQ(error_of([&] { conformance::find_case_files({empty.string()}); }),
            "PATH " + empty.string() + ": a folder with no .json case files, expected cases");
  const std::string long_path = "/tmp/" + std::string(5000, 'a');
  EXPECT_THAT(error_of([&] { conformance::find_case_files({long_path}); }),
              HasSubstr("(5005 characters): File name too long, expected a case file"));
}

// issue 42: a 1-byte pipeline_chunk split the collectives workload's 1 GiB all-reduce into a
// piece record per element and took 9 GB before finishing; it is refused before planning.
TEST(Hardening, pipeline_chunk_that_splits_a_collective_into_too_many_pieces_is_an_error) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "spmdsim_chunk_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "m.json") << R"({"name": "ring", "devices": 8, "memory": "16GiB",
    "pipeline_chunk": "1B", "compute": {"peak_flops": "100TFLOP/s", "memory_bandwidth": "900GB/s"},
    "topology": {"kind": "ring", "bidirectional": false,
                 "link": {"bandwidth": "50GB/s", "latency": "2us"}}})";
  const CommandResult result =
      run_binary("run " + (dir / "m.json").string() + " " + SPMD_SOURCE_DIR +
                 "/docs/workloads/collectives.json --out " + (dir / "out").string());
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_THAT(result.output,
              HasSubstr("pipeline_chunk 1 B: psum('i') of 1073741824 B would split into "
                        "268435456 pieces, expected at most 16777216 per collective (a "
                        "pipeline_chunk of at least 64 B)"));
}

}  // namespace
}  // namespace spmd
