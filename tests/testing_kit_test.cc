// The testing kit (testing/, docs/testing.md) at work: its generators give what JAX accepts, the
// simulator passes the check against the reference on generated programs, and the check fails,
// naming the first differing element, where a backend's results are not the reference's.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstring>
#include <optional>
#include <string>

#include "backends/sim_backend.h"
#include "collectives/algorithm.h"
#include "reference/array_difference.h"
#include "reference/collective_semantics.h"
#include "reference/reference_backend.h"
#include "testing/check_against_reference.h"
#include "testing/collective_call_generator.h"
#include "testing/generators.h"
#include "testing/program_generator.h"
#include "tests/generators.h"

namespace spmd {
namespace {

using testkit::Program;

// The simulator's algorithms whose reference order needs nothing but the algorithm (torus needs
// each group's grid, which order_for_algorithm cannot give).
std::vector<collectives::Algorithm> algorithms_with_an_order() {
  std::vector<collectives::Algorithm> algorithms;
  for (collectives::Algorithm a : collectives::all_algorithms()) {
    if (collectives::reduction_algorithm_of(a)) algorithms.push_back(a);
  }
  return algorithms;
}

// ---- Generators

RC_GTEST_PROP(TestingKit, partition_spec_generator_gives_specs_the_mesh_accepts, ()) {
  const Mesh mesh = *testkit::mesh();
  const int rank = *rc::gen::inRange(0, 4);
  const PartitionSpec spec = *testkit::partition_spec(mesh, rank);
  RC_ASSERT(spec.length() <= rank);
  validate_spec(spec, mesh, "spec");  // throws spmd::Error for an unknown or repeated axis
}

RC_GTEST_PROP(TestingKit, collective_call_generator_gives_calls_jax_accepts, ()) {
  const Mesh mesh = *testkit::mesh(1, 3, 8);
  const testkit::Operand operand{
      .dtype = *testkit::dtype_of(testkit::all_dtypes()),
      .shape = *testkit::shape(0, 3, 8),
      .varying = *rc::gen::inRange<VaryingAxes>(0, VaryingAxes{1} << mesh.axis_count())};
  const bool check_vma = *rc::gen::arbitrary<bool>();
  const CollectiveCall call = *testkit::collective_call(mesh, operand, {.check_vma = check_vma});
  RC_TAG(collective_op_name(call.op), call.axis_index_groups.has_value());
  const Array input = Array(operand.dtype, operand.shape).with_varying_axes(operand.varying);
  validate_collective(call, mesh, input, check_vma);  // throws spmd::Error with JAX's message
}

RC_GTEST_PROP(TestingKit, order_sensitive_floats_sum_to_other_bits_in_another_order, ()) {
  // Three contributions of 256 elements: (a + b) + c and (c + b) + a differ in some element, which
  // sums of small integers or of values of one magnitude would not. An element differs with
  // probability about 0.17 (values whose exponents lie far apart round alike either way), so all
  // of 64 elements summed alike for a few seeds in 200,000 (seen once in a 1000-case run); all of
  // 256, about once in 10^20.
  constexpr std::size_t kColumns = 256;
  const Array data = *testkit::order_sensitive_array(DType::float32, {3, kColumns});
  const auto x = data.values<float>();
  int differing = 0;
  for (std::size_t i = 0; i < kColumns; ++i) {
    differing += (x[i] + x[kColumns + i]) + x[2 * kColumns + i] !=
                 (x[2 * kColumns + i] + x[kColumns + i]) + x[i];
  }
  RC_ASSERT(differing > 0);
}

// ---- The check passes on a backend that matches the reference

RC_GTEST_PROP(TestingKit, sim_backend_matches_the_reference_in_its_algorithms_order, ()) {
  const Program program = *testkit::program({.max_devices = 8});
  const collectives::Algorithm algorithm = *rc::gen::elementOf(algorithms_with_an_order());
  const ReductionOrder order = order_for_algorithm(algorithm);
  const auto sim = make_sim_backend(order, program.mesh.device_count(), "ring");
  RC_TAG(std::holds_alternative<PmapOptions>(program.mapping) ? "pmap" : "shard_map");
  testkit::rc_assert_matches_reference(*sim, program, order);
}

// ---- The check fails where the backend's results are not the reference's

// The first element (output, flat index) whose bits differ, found by a plain scan.
std::optional<std::pair<std::size_t, std::int64_t>> first_differing_bits(const Values& got,
                                                                         const Values& expected) {
  for (std::size_t j = 0; j < got.size(); ++j) {
    const std::size_t size = dtype_size_bytes(got[j].dtype());
    for (std::int64_t i = 0; i < got[j].size(); ++i) {
      const std::size_t offset = static_cast<std::size_t>(i) * size;
      if (std::memcmp(got[j].bytes().data() + offset, expected[j].bytes().data() + offset, size)) {
        return std::pair{j, i};
      }
    }
  }
  return std::nullopt;
}

// A backend that folds in rank order (the reference in xla_cpu order) claimed to fold in the
// reversed NCCL ring: the check passes exactly when every output has the claimed order's bits,
// and otherwise names the first element that does not, with both values.
RC_GTEST_PROP(TestingKit, check_names_the_first_element_that_differs_from_the_claimed_order, ()) {
  const Program program = *testkit::program(
      {.max_devices = 8,
       .dtypes = testkit::float_dtypes(),
       .calls = {.ops = {CollectiveOp::psum, CollectiveOp::pmean, CollectiveOp::psum_scatter}}});
  const int devices = program.mesh.device_count();
  ReductionOrder claimed{.algorithm = ReductionAlgorithm::nccl_ring};
  for (int d = devices; d-- > 0;) claimed.ring.push_back(d);
  ReferenceBackend rank_order(ReductionOrder{}, devices);
  ReferenceBackend claimed_order(claimed, devices);

  const std::string report = testkit::difference_from_reference(rank_order, program, claimed);
  const auto differing = first_differing_bits(testkit::run_program(rank_order, program),
                                              testkit::run_program(claimed_order, program));
  RC_CLASSIFY(differing.has_value(), "the orders give different bits");
  if (!differing) {
    RC_ASSERT(report.empty());
    return;
  }
  const auto [output, flat] = *differing;
  const Values got = testkit::run_program(rank_order, program);
  const Shape index = element_index(got[output].shape(), flat);
  const std::string start =
      "output " + std::to_string(output) + " element " + shape_to_string(index) + " (device ";
  RC_ASSERT(report.starts_with(start));
  RC_ASSERT(report.ends_with("(the reference in " + claimed.describe() + " order)"));
}

TEST(TestingKit, check_reports_the_first_differing_element_with_its_device_and_both_values) {
  // psum over 'x' of a 4 x 2 mesh, blocks float32[1, 8] of a float32[4, 16] split
  // P('x', 'y'); rank order against the reversed NCCL ring. The values are this seed's, as the
  // check printed them. The output float32[1, 16] is P(None, 'y'): element (0, 0) is in the
  // block of 'y' = 0, read from device 0 (the first of its replicas along 'x').
  const Program program{
      .description = "psum('x') of random float32[4, 16] split P('x', 'y'), seed 7",
      .mesh = Mesh({4, 2}, {"x", "y"}),
      .mapping = ShardMapOptions{.in_specs = {PartitionSpec({{"x"}, {"y"}})},
                                 .out_specs = {PartitionSpec({{}, {"y"}})}},
      .function = testkit::collective_chain({CollectiveCall{.axes = "x"}}, false),
      .inputs = {random_array(DType::float32, {4, 16}, 7)}};
  ReferenceBackend rank_order(ReductionOrder{}, 8);
  const ReductionOrder reversed_ring{.algorithm = ReductionAlgorithm::nccl_ring,
                                     .ring = {7, 6, 5, 4, 3, 2, 1, 0}};
  EXPECT_EQ(testkit::difference_from_reference(rank_order, program, reversed_ring),
            "output 0 element (0, 0) (device 0, element (0, 0)) is -197.019287, expected "
            "-197.019272 (the reference in nccl_ring(ring=7,6,5,4,3,2,1,0) order)");
  // Element (0, 9) is in the block of 'y' = 1, first held by device 1 (x = 0, y = 1), at (0, 1).
  EXPECT_EQ(testkit::device_element(program, 0, {1, 16}, {0, 9}), "device 1, element (0, 1)");
}

TEST(TestingKit, check_reports_a_backend_that_rejects_a_program_the_reference_runs) {
  // The simulator holds memory to its devices' 80 GiB; the reference holds none.
  Program program{.description = "hold 100 GiB, then psum('i')",
                  .mesh = Mesh({2}, {"i"}),
                  .mapping = PmapOptions{.axis_name = "i"},
                  .function =
                      [](Context& ctx, const Values& xs) {
                        ctx.hold_memory(std::int64_t{100} << 30, "weights");
                        return Values{ctx.psum(xs[0], "i")};
                      },
                  .inputs = {random_array(DType::float32, {2, 3}, 1)}};
  const ReductionOrder order = order_for_algorithm(collectives::Algorithm::ring);
  const auto sim = make_sim_backend(order, 2, "ring");
  const std::string report = testkit::difference_from_reference(*sim, program, order);
  EXPECT_TRUE(report.starts_with("backend '" + sim->name() + "' rejected the program (")) << report;
  EXPECT_TRUE(report.ends_with("), but the reference in nccl_ring order runs it")) << report;
}

TEST(TestingKit, both_rejecting_a_program_is_agreement) {
  // pmap over 4 devices on a backend of 2: JAX's error on both sides.
  const Program program{.description = "psum('i') over 4 devices",
                        .mesh = Mesh({4}, {"i"}),
                        .mapping = PmapOptions{.axis_name = "i"},
                        .function = testkit::collective_chain({CollectiveCall{.axes = "i"}}, false),
                        .inputs = {random_array(DType::float32, {4}, 1)}};
  const ReductionOrder order = order_for_algorithm(collectives::Algorithm::ring);
  const auto sim = make_sim_backend(order, 2, "ring");
  EXPECT_EQ(testkit::difference_from_reference(*sim, program, order), "");
  // pmap stacks device d's result at index d of out_axes 0.
  EXPECT_EQ(testkit::device_element(program, 0, {4, 3}, {2, 1}), "device 2, element (1,)");
}

TEST(TestingKit, rc_assert_matches_reference_fails_the_property) {
  const Program program{.description = "psum('i') of random float32[8, 16], seed 1",
                        .mesh = Mesh({8}, {"i"}),
                        .mapping = PmapOptions{.axis_name = "i"},
                        .function = testkit::collective_chain({CollectiveCall{.axes = "i"}}, false),
                        .inputs = {random_array(DType::float32, {8, 16}, 1)}};
  ReferenceBackend rank_order(ReductionOrder{}, 8);
  const ReductionOrder claimed{.algorithm = ReductionAlgorithm::nccl_ring,
                               .ring = {7, 6, 5, 4, 3, 2, 1, 0}};
  EXPECT_FALSE(rc::check("a backend claimed to fold in another order", [&] {
    testkit::rc_assert_matches_reference(rank_order, program, claimed);
  }));
  EXPECT_TRUE(rc::check("the same backend in its own order", [&] {
    testkit::rc_assert_matches_reference(rank_order, program, ReductionOrder{});
  }));
}

}  // namespace
}  // namespace spmd
