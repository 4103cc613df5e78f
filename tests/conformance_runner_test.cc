// The conformance runner: public cases pass; a wrong expectation is reported with its first
// differing element; malformed case files are rejected naming the field; the CLI's exit codes.

#include "conformance/conformance_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/conform_command.h"
#include "reference/npy.h"
#include "tests/error_of.h"

namespace spmd::conformance {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A fresh folder holding one case: x = [1, 2, 3, 4] on 4 devices, body psum, out_axes 0.
class CaseFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() /
              ("spmd_conformance_" +
               std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(folder_);
    fs::create_directories(folder_);
    write_npy((folder_ / "x.npy").string(), Array::from_values<float>({4}, {1, 2, 3, 4}));
  }
  void TearDown() override { fs::remove_all(folder_); }

  std::string write_case(const std::string& json) {
    const fs::path path = folder_ / "c.json";
    std::ofstream(path) << json;
    return path.string();
  }

  std::string psum_case(const std::string& expected_file) {
    write_npy(
        (folder_ / expected_file).string(),
        Array::from_values<float>({4}, {10, 10, 10, expected_file == "bad.npy" ? 11.f : 10.f}));
    return write_case(R"({"format": 1, "name": "psum4",
      "mesh": {"shape": [4], "axis_names": ["i"]},
      "map": {"kind": "pmap", "axis_name": "i", "in_axes": [0], "out_axes": [0]},
      "inputs": [{"file": "x.npy"}],
      "body": [{"op": "psum", "args": ["in0"], "axis_name": "i"}],
      "outputs": ["s0"],
      "expected": {"outputs": [{"file": ")" +
                      expected_file + R"("}]}})");
  }

  // psum4 in the in_switch order over x.npy = `x` (one element per device), its expected file
  // the exact sums.
  std::string in_switch_psum_case(const std::vector<float>& x) {
    write_npy((folder_ / "x.npy").string(), Array::from_values<float>({4}, x));
    const float sum = static_cast<float>(static_cast<double>(x[0]) + x[1] + x[2] + x[3]);
    write_npy((folder_ / "sums.npy").string(),
              Array::from_values<float>({4}, {sum, sum, sum, sum}));
    return write_case(R"({"format": 1, "name": "psum4", "order": "in_switch",
      "mesh": {"shape": [4], "axis_names": ["i"]},
      "map": {"kind": "pmap", "axis_name": "i", "in_axes": [0], "out_axes": [0]},
      "inputs": [{"file": "x.npy"}],
      "body": [{"op": "psum", "args": ["in0"], "axis_name": "i"}],
      "outputs": ["s0"],
      "expected": {"outputs": [{"file": "sums.npy"}]}})");
  }

  fs::path folder_;
};

TEST(PublicCases, EveryCasePassesOnTheReference) {
  const auto files = find_case_files({SPMD_CONFORMANCE_DIR});
  ASSERT_EQ(files.size(), 41u);
  for (const std::string& file : files) {
    const CaseResult result = run_case(load_case(file), RunOptions{});
    EXPECT_TRUE(result.passed) << file << ": " << result.failure;
  }
}

TEST_F(CaseFolder, MatchingExpectationPasses) {
  const CaseResult result = run_case(load_case(psum_case("good.npy")), RunOptions{});
  EXPECT_TRUE(result.passed) << result.failure;
}

TEST_F(CaseFolder, WrongExpectationReportsTheFirstDifferingElement) {
  const CaseResult result = run_case(load_case(psum_case("bad.npy")), RunOptions{});
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(result.failure, "output 0 element (3,) is 10, expected 11 (JAX's expected output)");
}

TEST_F(CaseFolder, CliPrintsOneLinePerFailureAndTheTotals) {
  psum_case("bad.npy");
  std::ostringstream out;
  ConformOptions options;
  options.paths = {folder_.string()};
  EXPECT_EQ(run_conform_command(options, out), 1);
  EXPECT_EQ(out.str(),
            "FAIL psum4: output 0 element (3,) is 10, expected 11 (JAX's expected output)\n"
            "0 passed, 1 failed\n");
}

TEST_F(CaseFolder, CliExitsZeroWhenAllPass) {
  psum_case("good.npy");
  std::ostringstream out;
  ConformOptions options;
  options.paths = {folder_.string()};
  EXPECT_EQ(run_conform_command(options, out), 0);
  EXPECT_EQ(out.str(), "1 passed, 0 failed\n");
}

TEST_F(CaseFolder, MissingFieldIsNamed) {
  const std::string path = write_case(R"({"format": 1, "name": "x",
      "mesh": {"shape": [4], "axis_names": ["i"]},
      "map": {"kind": "pmap", "axis_name": "i", "out_axes": [0]},
      "inputs": [], "body": [], "outputs": [], "expected": {"outputs": []}})");
  EXPECT_THAT(test_errors::error_of([&] { load_case(path); }), HasSubstr("map.in_axes: missing"));
}

TEST_F(CaseFolder, BadReferenceIsNamed) {
  const std::string path = write_case(R"({"format": 1, "name": "x",
      "mesh": {"shape": [4], "axis_names": ["i"]},
      "map": {"kind": "pmap", "axis_name": "i", "in_axes": [0], "out_axes": [0]},
      "inputs": [{"file": "x.npy"}],
      "body": [{"op": "neg", "args": ["s3"]}],
      "outputs": ["s0"], "expected": {"outputs": [{"file": "x.npy"}]}})");
  EXPECT_THAT(test_errors::error_of([&] { load_case(path); }),
              HasSubstr("body[0].args[0]: \"s3\" (an argument of neg) refers to a value that does "
                        "not exist, expected one defined before the step: in0"));
}

// issue 42: "s00" ran as "s0". A reference names a value by its exact name, defined before it.
TEST_F(CaseFolder, ReferenceMustBeAValuesExactName) {
  const auto error_with = [&](const std::string& arg, const std::string& output) {
    const std::string path = write_case(R"({"format": 1, "name": "x",
      "mesh": {"shape": [4], "axis_names": ["i"]},
      "map": {"kind": "pmap", "axis_name": "i", "in_axes": [0], "out_axes": [0]},
      "inputs": [{"file": "x.npy"}],
      "body": [{"op": "neg", "args": ["in0"]}, {"op": "add", "args": ["s0", ")" + arg + R"("]}],
      "outputs": [")" + output + R"("], "expected": {"outputs": [{"file": "x.npy"}]}})");
    return test_errors::error_of([&] { load_case(path); });
  };
  EXPECT_THAT(error_with("s00", "s1"),
              HasSubstr("body[1].args[1]: \"s00\" (an argument of add) refers to a value that "
                        "does not exist (a value's name has no leading zeros), expected the exact "
                        "name of one defined before the step: in0, s0"));
  EXPECT_THAT(error_with("in00", "s1"), HasSubstr("\"in00\" (an argument of add) refers to a value"));
  EXPECT_THAT(error_with("s1", "s1"), HasSubstr("\"s1\" (an argument of add) refers to a value "
                                               "that does not exist"));
  EXPECT_THAT(error_with("s0x", "s1"),
              HasSubstr("\"s0x\" (an argument of add) is not a reference, expected inN or sK"));
  EXPECT_THAT(error_with("s0", "s01"),
              HasSubstr("outputs[0]: \"s01\" refers to a value that does not exist (a value's name "
                        "has no leading zeros), expected the exact name of one defined in the "
                        "case: in0, s0, s1"));
  EXPECT_THAT(error_with("s0", "s99999999999"),
              HasSubstr("outputs[0]: \"s99999999999\" refers to a value that does not exist"));
}

// issue 42: in_axes / out_axes of another length than the inputs / outputs are the program's
// error, raised by JAX at the call (a ValueError): a case expecting an error passes, one
// expecting outputs fails; neither is a malformed file.
TEST(PublicCases, WrongLengthInAxesAndOutAxesAreProgramErrors) {
  for (const std::string name : {"err_pmap_in_axes_wrong_length", "err_pmap_out_axes_wrong_length"}) {
    const Case c = load_case(std::string(SPMD_CONFORMANCE_DIR) + "/" + name + ".json");
    ASSERT_TRUE(c.program_error.has_value()) << name;
    EXPECT_THAT(*c.program_error, HasSubstr("ValueError: pmap "));
    EXPECT_THAT(*c.program_error, HasSubstr("pytree structure error: different lengths of tuple"));
    const CaseResult result = run_case(c, RunOptions{});
    EXPECT_TRUE(result.passed) << name << ": " << result.failure << result.error;
  }
  Case expecting_outputs =
      load_case(std::string(SPMD_CONFORMANCE_DIR) + "/err_pmap_in_axes_wrong_length.json");
  expecting_outputs.expected_error.reset();
  expecting_outputs.expected_outputs = Values{};
  const CaseResult result = run_case(expecting_outputs, RunOptions{});
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(result.failure,
            "raised an error: map.in_axes: ValueError: pmap in_axes has 2 entries but the function "
            "was called with 1 positional argument (pytree structure error: different lengths of "
            "tuple at key path pmap in_axes): in_axes must be a tree prefix of the tuple of "
            "arguments passed positionally to the pmapped function");
}

TEST_F(CaseFolder, UnknownOpIsNamed) {
  const std::string path = write_case(R"({"format": 1, "name": "x",
      "mesh": {"shape": [4], "axis_names": ["i"]},
      "map": {"kind": "pmap", "axis_name": "i", "in_axes": [0], "out_axes": [0]},
      "inputs": [{"file": "x.npy"}],
      "body": [{"op": "psim", "args": ["in0"], "axis_name": "i"}],
      "outputs": ["s0"], "expected": {"outputs": [{"file": "x.npy"}]}})");
  EXPECT_THAT(test_errors::error_of([&] { load_case(path); }),
              HasSubstr("body[0].op: collective \"psim\" is not known"));
}

// The psum case of psum_case() with `replace` substituted for `field` (the text from the field's
// name to the end of its value, as written there).
std::string with_field(const std::string& field, const std::string& replace) {
  std::string json = R"({"format": 1, "name": "psum4",
      "mesh": {"shape": [4], "axis_names": ["i"]},
      "map": {"kind": "pmap", "axis_name": "i", "in_axes": [0], "out_axes": [0]},
      "inputs": [{"file": "x.npy"}],
      "body": [{"op": "psum", "args": ["in0"], "axis_name": "i"}],
      "outputs": ["s0"],
      "expected": {"outputs": [{"file": "x.npy"}]}})";
  const std::size_t at = json.find(field);
  EXPECT_NE(at, std::string::npos) << field;
  return json.replace(at, field.size(), replace);
}

TEST_F(CaseFolder, IntegersBeyondTheirTypeAreErrorsNamingTheField) {
  // 4294967297 = 2^32 + 1 and 4294967300 = 2^32 + 4 were once read as 1 and 4.
  const std::string format = write_case(with_field(R"("format": 1)", R"("format": 4294967297)"));
  EXPECT_EQ(test_errors::error_of([&] { load_case(format); }),
            format + ": format: 4294967297, expected 1");
  const std::string shape = write_case(with_field(R"("shape": [4])", R"("shape": [4294967300])"));
  EXPECT_EQ(test_errors::error_of([&] { load_case(shape); }),
            shape + ": mesh.shape[0]: 4294967300, expected a positive integer up to 2147483647");
  const std::string axis =
      write_case(with_field(R"("in_axes": [0])", R"("in_axes": [2147483648])"));
  EXPECT_EQ(test_errors::error_of([&] { load_case(axis); }),
            axis + ": map.in_axes[0]: 2147483648, expected an integer axis or null");
}

TEST_F(CaseFolder, UnknownFieldsAreErrorsListingTheKnownOnes) {
  const std::string root = write_case(with_field(R"("name": "psum4")", R"("nmae": "psum4")"));
  EXPECT_EQ(test_errors::error_of([&] { load_case(root); }),
            root +
                ": nmae: unknown field, expected one of format, name, about, jax_version, "
                "mesh, map, inputs, processes, load, body, outputs, expected, order");
  // psum has no `tiled` in JAX; a parameter of another collective is not silently ignored.
  const std::string step =
      write_case(with_field(R"("axis_name": "i"}])", R"("axis_name": "i", "tiled": true}])"));
  EXPECT_EQ(test_errors::error_of([&] { load_case(step); }),
            step +
                ": body[0].tiled: unknown field, expected one of op, args, axis_name, "
                "axis_index_groups");
  const std::string input =
      write_case(with_field(R"([{"file": "x.npy"}],)", R"([{"file": "x.npy", "dtyp": "f4"}],)"));
  EXPECT_EQ(test_errors::error_of([&] { load_case(input); }),
            input + ": inputs[0].dtyp: unknown field, expected one of file, dtype");
}

TEST_F(CaseFolder, WrongTypesSayWhatWasExpected) {
  const std::string path = write_case(with_field(R"("outputs": ["s0"])", R"("outputs": "s0")"));
  EXPECT_EQ(test_errors::error_of([&] { load_case(path); }),
            path + ": outputs: \"s0\" is a string, expected a list of references");
  const std::string ref = write_case(with_field(R"("args": ["in0"])", R"("args": [0])"));
  EXPECT_EQ(test_errors::error_of([&] { load_case(ref); }),
            ref + ": body[0].args[0]: 0 is a number, expected a reference inN or sK");
}

TEST_F(CaseFolder, MissingNpyFileIsNamedByItsField) {
  const std::string path =
      write_case(with_field(R"({"file": "x.npy"}],)", R"({"file": "y.npy"}],)"));
  EXPECT_THAT(test_errors::error_of([&] { load_case(path); }),
              HasSubstr(path + ": inputs[0].file: "));
}

TEST_F(CaseFolder, NumberBeyondDoublesRangeMakesTheCliExitWithTwo) {
  write_case(with_field(R"("format": 1)", R"("format": 1e400)"));
  std::ostringstream out;
  ConformOptions options;
  options.paths = {folder_.string()};
  EXPECT_EQ(run_conform_command(options, out), 2);
  EXPECT_THAT(out.str(), HasSubstr("c.json: not valid JSON ("));
}

TEST_F(CaseFolder, MalformedCaseMakesTheCliExitWithTwo) {
  write_case("{ not json");
  std::ostringstream out;
  ConformOptions options;
  options.paths = {folder_.string()};
  EXPECT_EQ(run_conform_command(options, out), 2);
  EXPECT_THAT(out.str(), HasSubstr("not valid JSON"));
}

// ---- Errors found while a case loads: a program JAX rejects is the case's result

// A 2x2 mesh naming its axis twice: the JSON reads well, but JAX rejects the program.
std::string duplicate_axis_names_case(const std::string& expected) {
  return R"({"format": 1, "name": "dup",
      "mesh": {"shape": [2, 2], "axis_names": ["x", "x"]},
      "map": {"kind": "shard_map", "in_specs": [["x"]], "out_specs": [["x"]]},
      "inputs": [{"file": "x.npy"}],
      "body": [{"op": "neg", "args": ["in0"]}],
      "outputs": ["s0"],
      "expected": )" +
         expected + "}";
}

TEST_F(CaseFolder, ProgramErrorFoundWhileLoadingPassesWhenTheCaseExpectsAnError) {
  const Case c = load_case(write_case(duplicate_axis_names_case(R"({"error": "duplicate"})")));
  ASSERT_TRUE(c.program_error.has_value());
  EXPECT_EQ(*c.program_error, "mesh: mesh.axis_names has 'x' twice, expected unique names");
  EXPECT_EQ(c.device_count, 4);
  const CaseResult result = run_case(c, RunOptions{});
  EXPECT_TRUE(result.passed) << result.failure;
  std::ostringstream out;
  ConformOptions options;
  options.paths = {folder_.string()};
  EXPECT_EQ(run_conform_command(options, out), 0) << out.str();
}

TEST_F(CaseFolder, ProgramErrorFoundWhileLoadingFailsACaseThatExpectsOutputsNotMalformed) {
  write_case(duplicate_axis_names_case(R"({"outputs": [{"file": "x.npy"}]})"));
  std::ostringstream out;
  ConformOptions options;
  options.paths = {folder_.string()};
  EXPECT_EQ(run_conform_command(options, out), 1);
  EXPECT_EQ(out.str(),
            "FAIL dup: raised an error: mesh: mesh.axis_names has 'x' twice, expected unique "
            "names\n"
            "0 passed, 1 failed\n");
}

TEST_F(CaseFolder, AFileTheFormatCannotReadStaysMalformedWhateverItExpects) {
  // A misspelt field in a case that expects an error is still the file's fault (exit code 2).
  write_case(with_field(R"("expected": {"outputs": [{"file": "x.npy"}]})",
                        R"("expected": {"error": "x"}, "oder": "xla_cpu")"));
  std::ostringstream out;
  ConformOptions options;
  options.paths = {folder_.string()};
  EXPECT_EQ(run_conform_command(options, out), 2);
  EXPECT_THAT(out.str(), HasSubstr("oder: unknown field"));
}

// ---- --ring: the mesh's device ids, each group folding along the ring restricted to it

TEST(Cli, RingOfFourDevicesFoldsTwoDeviceGroupsAlongItsRestriction) {
  // pmap_psum_axis_index_groups: psum over groups [0, 1] and [2, 3] of a 4-device mesh; the
  // groups' rings are 0, 1 and 2, 3 (this once failed: "expected a permutation of 0..1").
  std::ostringstream out;
  ConformOptions options;
  options.order = "nccl_ring";
  options.ring = {"0", "2", "1", "3"};
  options.paths = {std::string(SPMD_CONFORMANCE_DIR) + "/pmap_psum_axis_index_groups.json",
                   std::string(SPMD_CONFORMANCE_DIR) + "/pmap_psum_f32_rank_order.json"};
  EXPECT_EQ(run_conform_command(options, out), 0) << out.str();
  EXPECT_EQ(out.str(), "2 passed, 0 failed\n");
}

TEST(Cli, RingOfAnotherLengthThanACaseMeshStopsBeforeAnyCaseRuns) {
  std::ostringstream out;
  ConformOptions options;
  options.order = "nccl_ring";
  options.ring = {"0", "2", "1", "3"};
  options.verbose = true;
  options.paths = {SPMD_CONFORMANCE_DIR};
  EXPECT_EQ(test_errors::error_of([&] { run_conform_command(options, out); }),
            std::string(SPMD_CONFORMANCE_DIR) +
                "/err_smap_not_divisible.json: the case's mesh has 8 devices, --ring 0,2,1,3 "
                "lists 4; expected a ring of all 8 devices");
  EXPECT_EQ(out.str(), "") << "no case runs before the check";
}

TEST(Cli, RingMustBeAPermutationOfDeviceIdsAndComeWithAnOrder) {
  std::ostringstream out;
  ConformOptions options;
  options.order = "nccl_ring";
  options.ring = {"0", "2", "2", "3"};
  options.paths = {SPMD_CONFORMANCE_DIR};
  EXPECT_EQ(test_errors::error_of([&] { run_conform_command(options, out); }),
            "--ring: ring 0,2,2,3 for 4 devices, expected a permutation of the device ids 0..3");
  options.order.clear();
  options.ring = {"0", "2", "1", "3"};
  EXPECT_EQ(test_errors::error_of([&] { run_conform_command(options, out); }),
            "--ring 0,2,1,3 without --order, expected --order with it");
}

// The simulator's --topology is checked before a case gives its device count: a grid that fits
// the cases' 4 devices runs; text that fits no device count is an error.
TEST(Cli, SimTopologyThatFitsTheCasesRuns) {
  std::ostringstream out;
  ConformOptions options;
  options.backend = "sim";
  options.topology = "torus:2x2";
  options.paths = {std::string(SPMD_CONFORMANCE_DIR) + "/pmap_psum_pmean_all_gather.json"};
  EXPECT_EQ(run_conform_command(options, out), 0) << out.str();
  options.topology = "torus:2xq";
  EXPECT_EQ(test_errors::error_of([&] { run_conform_command(options, out); }),
            "--topology: 'torus:2xq', expected sizes like torus:4x2 or torus:2x2x2");
}

TEST(Cli, MissingPathIsAnError) {
  std::ostringstream out;
  ConformOptions options;
  options.paths = {"/nonexistent/cases"};
  EXPECT_THROW(run_conform_command(options, out), Error);
}

TEST(Cli, UnknownBackendIsAnError) {
  std::ostringstream out;
  ConformOptions options;
  options.backend = "nope";
  options.paths = {SPMD_CONFORMANCE_DIR};
  try {
    run_conform_command(options, out);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--backend nope is not known, expected one of: "));
    EXPECT_THAT(e.what(), HasSubstr("gloo, "));
    EXPECT_THAT(e.what(), HasSubstr("reference, sim"));
  }
}

TEST(OtherOrders, RankOrderCaseDiffersFromJaxOnlyByTheOrder) {
  // pmap_psum_f32_rank_order sums [1e8, x, -1e8, 1]-like columns whose float result depends on
  // the order: in NCCL's ring order it differs from JAX's file, and the runner says so.
  const Case c = load_case(std::string(SPMD_CONFORMANCE_DIR) + "/pmap_psum_f32_rank_order.json");
  RunOptions options;
  options.order = ReductionOrder{.algorithm = ReductionAlgorithm::nccl_ring};
  const CaseResult result = run_case(c, options);
  EXPECT_TRUE(result.passed) << result.failure;
  ASSERT_FALSE(result.notes.empty());
  EXPECT_THAT(result.notes.back(), HasSubstr("only by the reduction order nccl_ring"));
}

// A JAX mismatch is excused by another order only where the order is its cause. These cases'
// expected files are wrong (the reference in the case's own order, xla_cpu, differs from them),
// so no order excuses them; the old rule passed them because the backend equals the reference
// in the backend's order, whatever the file says, even for an all_gather that reduces nothing.
TEST_F(CaseFolder, WrongExpectationIsNotExcusedByAnotherOrder) {
  write_npy((folder_ / "gathered.npy").string(),
            Array::from_values<float>({4, 4}, {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 5}));
  const Case gather = load_case(write_case(R"({"format": 1, "name": "gather4",
      "mesh": {"shape": [4], "axis_names": ["i"]},
      "map": {"kind": "pmap", "axis_name": "i", "in_axes": [0], "out_axes": [0]},
      "inputs": [{"file": "x.npy"}],
      "body": [{"op": "all_gather", "args": ["in0"], "axis_name": "i"}],
      "outputs": ["s0"],
      "expected": {"outputs": [{"file": "gathered.npy"}]}})"));
  const Case psum = load_case(psum_case("bad.npy"));
  RunOptions options;
  for (const ReductionAlgorithm algorithm :
       {ReductionAlgorithm::nccl_ring, ReductionAlgorithm::double_binary_tree}) {
    options.order = ReductionOrder{.algorithm = algorithm};
    const CaseResult gathered = run_case(gather, options);
    EXPECT_FALSE(gathered.passed);
    EXPECT_EQ(gathered.failure,
              "output 0 element (3, 3) is 4, expected 5 (JAX's expected output); not a "
              "reduction-order difference: the reference in the case's own order xla_cpu differs "
              "from JAX too");
    EXPECT_FALSE(run_case(psum, options).passed) << reduction_algorithm_name(algorithm);
  }
}

// ---- An unspecified order (in_switch): bits checked only on data exact in any order

TEST_F(CaseFolder, InSwitchCaseWithIntegerValuedDataPassesSayingOrderUnspecified) {
  const CaseResult result = run_case(load_case(in_switch_psum_case({1, 2, 3, 4})), RunOptions{});
  EXPECT_TRUE(result.passed) << result.failure << result.error;
  EXPECT_TRUE(result.order_unspecified);
  EXPECT_THAT(result.notes, ::testing::Contains(HasSubstr("order unspecified (in_switch)")));
  std::ostringstream out;
  ConformOptions options;
  options.paths = {folder_.string()};
  options.verbose = true;
  EXPECT_EQ(run_conform_command(options, out), 0);
  EXPECT_EQ(out.str(),
            "PASS psum4 (order unspecified)\n"
            "  note: order unspecified (in_switch): compared bit for bit on data whose reductions "
            "are exact in every order\n"
            "order unspecified in 1 case(s): bits compared only on data whose reductions are "
            "exact in every order\n"
            "1 passed, 0 failed\n");
}

// 1 + 1e8 rounds in float32: the sum's bits depend on which pair adds first.
TEST_F(CaseFolder, InSwitchCaseWhoseSumIsNotExactInEveryOrderIsAnErrorNamingTheField) {
  const std::string path = in_switch_psum_case({1, 1e8f, -1e8f, 0});
  const CaseResult result = run_case(load_case(path), RunOptions{});
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(result.error,
            path +
                ": order: in_switch: its inputs' sum is not exact in every order (psum('i') over "
                "devices 0,1,2,3, element 0), so the case's bits are not defined; expected data "
                "whose reductions are exact in any order (docs/reduction-orders.md, \"In-switch "
                "reductions\")");
  std::ostringstream out;
  ConformOptions options;
  options.paths = {folder_.string()};
  EXPECT_EQ(run_conform_command(options, out), 2);
  EXPECT_EQ(out.str(), "ERROR " + result.error + "\n0 passed, 1 failed\n");
}

TEST(OtherOrders, InSwitchRunRefusesACaseWhoseSumsDependOnTheOrderNamingTheFlag) {
  const std::string path = std::string(SPMD_CONFORMANCE_DIR) + "/pmap_psum_f32_rank_order.json";
  RunOptions options;
  options.order = ReductionOrder{.algorithm = ReductionAlgorithm::in_switch};
  const CaseResult result = run_case(load_case(path), options);
  EXPECT_FALSE(result.passed);
  EXPECT_THAT(result.error, ::testing::StartsWith(path + ": --order in_switch: its inputs' sum is "
                                                         "not exact in every order (psum('i')"));
}

TEST(OtherOrders, InSwitchRunComparesExactCasesWithJaxAsUsual) {
  // Integer sums, bool sums, max / min and data movement are exact in any order.
  RunOptions options;
  options.order = ReductionOrder{.algorithm = ReductionAlgorithm::in_switch};
  for (const std::string name : {"pmap_psum_int32_wraps", "pmap_psum_bool_is_int32",
                                 "pmap_all_to_all_tiled", "pmap_ppermute_ring"}) {
    const CaseResult result =
        run_case(load_case(std::string(SPMD_CONFORMANCE_DIR) + "/" + name + ".json"), options);
    EXPECT_TRUE(result.passed) << name << ": " << result.failure << result.error;
    EXPECT_TRUE(result.order_unspecified) << name;
  }
}

// A case without `jax_version` runs with conform's --jax-version: pmax over ('x', 'y') of a value
// varying over 'x' only is JAX 0.12's ValueError and JAX 0.10.2's maximum over all four devices.
TEST_F(CaseFolder, JaxVersionFlagSetsTheRulesOfCasesThatStateNone) {
  const auto pmax_case = [&](const std::string& expected, const std::string& version_field) {
    write_npy((folder_ / "max.npy").string(), Array::from_values<float>({2}, {3, 4}));
    return write_case(R"({"format": 1, "name": "pmax_partly_varying",)" + version_field + R"(
      "mesh": {"shape": [2, 2], "axis_names": ["x", "y"]},
      "map": {"kind": "shard_map", "in_specs": [["x"]], "out_specs": [[]]},
      "inputs": [{"file": "x.npy"}],
      "body": [{"op": "pmax", "args": ["in0"], "axis_name": ["x", "y"]}],
      "outputs": ["s0"],
      "expected": )" + expected + "}");
  };
  const std::string error = R"({"error": "ValueError: jax.lax.pmax can only accept ..."})";
  const std::string maximum = R"({"outputs": [{"file": "max.npy"}]})";
  const auto exit_code = [&](const std::string& version) {
    std::ostringstream out;
    ConformOptions options;
    options.paths = {folder_.string()};
    if (!version.empty()) options.jax_version = version;
    return run_conform_command(options, out);
  };
  pmax_case(error, "");
  EXPECT_EQ(exit_code(""), 0);  // 0.12 by default
  EXPECT_EQ(exit_code("0.12"), 0);
  EXPECT_EQ(exit_code("0.10"), 1);
  pmax_case(maximum, "");
  EXPECT_EQ(exit_code("0.12"), 1);
  EXPECT_EQ(exit_code("0.10"), 0);
  EXPECT_EQ(exit_code("0.10.2"), 0);
  // The case's own jax_version wins over the flag.
  pmax_case(maximum, R"( "jax_version": "0.10",)");
  EXPECT_EQ(exit_code("0.12"), 0);
  EXPECT_EQ(load_case(write_case(R"({"format": 1, "name": "v", "jax_version": "0.10",
      "mesh": {"shape": [4], "axis_names": ["i"]},
      "map": {"kind": "pmap", "axis_name": "i", "in_axes": [0], "out_axes": [0]},
      "inputs": [{"file": "x.npy"}], "body": [], "outputs": ["in0"],
      "expected": {"error": "e"}})"))
                .shard_map.jax_version,
            JaxVersion::v0_10);
  pmax_case(maximum, R"( "jax_version": "0.11",)");
  EXPECT_THAT(test_errors::error_of([&] { load_case((folder_ / "c.json").string()); }),
              HasSubstr(R"(jax_version: "0.11" is no JAX version the reference follows, )"
                        R"(expected 0.10 or 0.12)"));
}

}  // namespace
}  // namespace spmd::conformance
