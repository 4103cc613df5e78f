// Every algorithm's three faces agree: executing its schedule's data gives the reference folding
// in its order (all-reduce, reduce-scatter) or the exact data movement (the others), and its
// closed-form time equals a walk of its schedule on uniform, uncontended links.
// Case count from RC_PARAMS (CI: max_success=1000).

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "collectives/algorithm.h"
#include "collectives/schedule_data.h"
#include "collectives/step_source.h"
#include "cost_model/link_time.h"
#include "reference/elementwise.h"
#include "support/random_array.h"
#include "tests/generators.h"

namespace spmd {
namespace {

using collectives::Algorithm;
using collectives::CollectiveKind;
using collectives::CollectiveShape;

// Every algorithm: one added to collectives/ is tested here without a change.
const std::vector<Algorithm> kAlgorithms = collectives::all_algorithms();

// A random shape that `algorithm` supports for `kind`.
rc::Gen<CollectiveShape> shape_for(Algorithm algorithm, CollectiveKind kind) {
  return rc::gen::exec([=] {
    CollectiveShape shape;
    shape.kind = kind;
    if (algorithm == Algorithm::torus || algorithm == Algorithm::bidirectional_torus) {
      const int count = *rc::gen::inRange(1, 4);
      shape.ranks = 1;
      for (int k = 0; k < count; ++k) {
        shape.torus_dims.push_back(*rc::gen::inRange(1, 5));
        shape.ranks *= shape.torus_dims.back();
      }
    } else if (algorithm == Algorithm::halving_doubling) {
      shape.ranks = 1 << *rc::gen::inRange(0, 5);
    } else {
      shape.ranks = *rc::gen::inRange(1, 17);
    }
    const bool splits =
        kind == CollectiveKind::reduce_scatter || kind == CollectiveKind::all_to_all;
    shape.elements = splits ? shape.ranks * *rc::gen::inRange<std::int64_t>(0, 300)
                            : *rc::gen::inRange<std::int64_t>(0, 3000);
    shape.element_bytes = 4;
    if (*rc::gen::arbitrary<bool>()) shape.ring = *testkit::permutation(shape.ranks);
    shape.pipeline_chunk_bytes = *rc::gen::element<std::int64_t>(4, 16, 64, 1024, 2 << 20);
    shape.root = *rc::gen::inRange(0, shape.ranks);
    if (kind == CollectiveKind::permute) {
      for (int r = 0; r < shape.ranks; ++r)
        shape.permutation.emplace_back(r, (r + 1) % shape.ranks);
    }
    RC_PRE(collectives::supports(algorithm, shape));
    return shape;
  });
}

rc::Gen<CollectiveKind> any_kind() {
  return rc::gen::element(CollectiveKind::all_reduce, CollectiveKind::reduce_scatter,
                          CollectiveKind::all_gather, CollectiveKind::all_to_all,
                          CollectiveKind::permute, CollectiveKind::broadcast);
}

// The schedule's time on links that each take latency + serialization, never shared: each
// message (a transfer, or several marked same_message) alone on its link.
std::int64_t uniform_walk_ps(const collectives::Schedule& schedule, std::int64_t element_bytes,
                             std::int64_t latency_ps, std::int64_t bandwidth) {
  std::int64_t total = 0;
  for (const collectives::Step& step : schedule.steps) {
    std::int64_t longest = 0;
    collectives::for_each_message(
        step.transfers, [&](const collectives::Transfer& t, std::int64_t elements) {
          if (t.source == t.destination) return;
          longest = std::max(longest, cost_model::transfer_time_ps(elements * element_bytes,
                                                                   latency_ps, bandwidth));
        });
    total += longest;
  }
  return total;
}

RC_GTEST_PROP(CollectiveSchedules, closed_form_equals_the_uniform_walk_of_the_schedule, ()) {
  const Algorithm algorithm = *rc::gen::elementOf(kAlgorithms);
  const CollectiveShape shape = *shape_for(algorithm, *any_kind());
  const std::int64_t latency_ps = *rc::gen::inRange<std::int64_t>(0, 3'000'000);
  const std::int64_t bandwidth = *rc::gen::element<std::int64_t>(7, 1'000'000'000, 100'000'000'000);
  const collectives::Schedule schedule = collectives::build_schedule(algorithm, shape);
  RC_ASSERT(collectives::closed_form_time_ps(algorithm, shape, latency_ps, bandwidth) ==
            uniform_walk_ps(schedule, shape.element_bytes, latency_ps, bandwidth));
}

// The steps the simulator's timing produces one at a time are the schedule's, transfer for
// transfer and in order (link queues serve in request order), and the buffers it holds memory for
// have the schedule's sizes.
RC_GTEST_PROP(CollectiveSchedules, step_sources_give_the_schedules_steps, ()) {
  const Algorithm algorithm = *rc::gen::elementOf(kAlgorithms);
  const CollectiveShape shape = *shape_for(algorithm, *any_kind());
  const collectives::Schedule schedule = collectives::build_schedule(algorithm, shape);
  const std::shared_ptr<const collectives::StepSource> source =
      collectives::step_source(algorithm, shape);
  RC_ASSERT(source->ranks() == schedule.ranks);
  RC_ASSERT(source->work_elements() == schedule.work_elements);
  RC_ASSERT(source->max_received_elements_per_step() ==
            schedule.max_received_elements_per_step());
  const std::vector<collectives::Step> steps = collectives::materialize_steps(*source);
  RC_ASSERT(steps.size() == schedule.steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    RC_ASSERT(steps[i].transfers.size() == schedule.steps[i].transfers.size());
    RC_ASSERT(steps[i] == schedule.steps[i]);
  }
}

std::vector<Array> flat_inputs(const CollectiveShape& shape, DType dtype, std::uint64_t seed) {
  return random_per_device(dtype, {shape.elements}, shape.ranks, seed);
}

RC_GTEST_PROP(CollectiveSchedules, reductions_equal_the_reference_in_the_algorithms_order, ()) {
  const Algorithm algorithm = *rc::gen::elementOf(kAlgorithms);
  const CollectiveKind kind =
      *rc::gen::element(CollectiveKind::all_reduce, CollectiveKind::reduce_scatter);
  CollectiveShape shape = *shape_for(algorithm, kind);
  const DType dtype = *rc::gen::element(DType::float32, DType::float64, DType::float16,
                                        DType::bfloat16, DType::int32, DType::int8);
  const ReduceOp op = *rc::gen::element(ReduceOp::sum, ReduceOp::max, ReduceOp::min);
  // The direct schedule sums bfloat16 as bfloat16; XLA:CPU's order carries it in float32 (the
  // simulator converts around the schedule), so that pair is left to the simulator's tests.
  RC_PRE(!(algorithm == Algorithm::direct && dtype == DType::bfloat16 && op == ReduceOp::sum));
  shape.element_bytes = static_cast<std::int64_t>(dtype_size_bytes(dtype));
  const std::vector<Array> inputs = flat_inputs(shape, dtype, *testkit::seed());
  const std::vector<Array> results =
      collectives::run_schedule_data(collectives::build_schedule(algorithm, shape), inputs, op,
                                       kIeeeNumerics);
  const ReductionOrder order = collectives::reduction_order(algorithm, shape);
  if (kind == CollectiveKind::all_reduce) {
    const Array expected = all_reduce(inputs, op, order);
    for (const Array& r : results) RC_ASSERT(r.bitwise_equal(expected));
    return;
  }
  const std::int64_t block = shape.elements / shape.ranks;
  for (int d = 0; d < shape.ranks; ++d) {
    std::vector<Array> blocks;
    for (const Array& x : inputs) blocks.push_back(slice(x, 0, d * block, (d + 1) * block));
    const Array expected =
        reduce_with_plan(blocks, op, order.reduce_scatter_plan(shape.ranks, d, block), order);
    RC_ASSERT(results[static_cast<std::size_t>(d)].bitwise_equal(expected));
  }
}

RC_GTEST_PROP(CollectiveSchedules, data_movement_is_exact, ()) {
  const Algorithm algorithm = *rc::gen::elementOf(kAlgorithms);
  const CollectiveKind kind =
      *rc::gen::element(CollectiveKind::all_gather, CollectiveKind::all_to_all,
                        CollectiveKind::permute, CollectiveKind::broadcast);
  const CollectiveShape shape = *shape_for(algorithm, kind);
  const std::vector<Array> inputs = flat_inputs(shape, DType::int32, *testkit::seed());
  const std::vector<Array> results = collectives::run_schedule_data(
      collectives::build_schedule(algorithm, shape), inputs, ReduceOp::max, kIeeeNumerics);
  const int n = shape.ranks;
  for (int d = 0; d < n; ++d) {
    Array expected;
    switch (kind) {
      case CollectiveKind::all_gather: expected = concatenate(inputs, 0); break;
      case CollectiveKind::all_to_all: {
        const std::int64_t block = shape.elements / n;
        std::vector<Array> parts;
        for (const Array& x : inputs) parts.push_back(slice(x, 0, d * block, (d + 1) * block));
        expected = concatenate(parts, 0);
        break;
      }
      case CollectiveKind::permute:
        expected = inputs[static_cast<std::size_t>((d - 1 + n) % n)];
        break;
      default: expected = inputs[static_cast<std::size_t>(shape.root)]; break;
    }
    RC_ASSERT(results[static_cast<std::size_t>(d)].bitwise_equal(expected));
  }
}

// Generated inputs (perf's seeded data) are made tile by tile where the schedule reads them: the
// results have the bits of the same inputs held in memory, and the inputs are never made whole.
RC_GTEST_PROP(CollectiveSchedules, generated_inputs_give_the_bits_of_held_ones_unmade, ()) {
  const Algorithm algorithm = *rc::gen::elementOf(kAlgorithms);
  const CollectiveKind kind = *any_kind();
  CollectiveShape shape = *shape_for(algorithm, kind);
  const DType dtype = *rc::gen::element(DType::float32, DType::float64, DType::bfloat16,
                                        DType::int32, DType::int8);
  const ReduceOp op = *rc::gen::element(ReduceOp::sum, ReduceOp::max, ReduceOp::min);
  shape.element_bytes = static_cast<std::int64_t>(dtype_size_bytes(dtype));
  const std::uint64_t seed = *testkit::seed();
  const collectives::Schedule schedule = collectives::build_schedule(algorithm, shape);
  const std::vector<Array> lazy =
      lazy_random_per_device(dtype, {shape.elements}, shape.ranks, seed);
  const std::vector<Array> lazy_results =
      collectives::run_schedule_data(schedule, lazy, op, kIeeeNumerics);
  for (const Array& x : lazy) RC_ASSERT(x.element_generator() != nullptr);
  const std::vector<Array> held_results = collectives::run_schedule_data(
      schedule, flat_inputs(shape, dtype, seed), op, kIeeeNumerics);
  RC_ASSERT(lazy_results.size() == held_results.size());
  for (std::size_t r = 0; r < held_results.size(); ++r) {
    RC_ASSERT(lazy_results[r].bitwise_equal(held_results[r]));
  }
}

TEST(CollectiveSchedules, NamesRoundTripAndUnknownNamesAreListed) {
  for (Algorithm a : kAlgorithms) {
    EXPECT_EQ(collectives::algorithm_from_name(collectives::algorithm_name(a)), a);
  }
  try {
    collectives::algorithm_from_name("rign");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "algorithm 'rign' is unknown, expected one of: direct, ring, bidirectional_ring, "
              "halving_doubling, binary_tree, double_binary_tree, torus, bidirectional_torus");
  }
}

// The order each algorithm's parts name is the one its order() gives, and the inverse lookup
// finds the algorithm back; the tori have none (their orders need the grid).
TEST(CollectiveSchedules, ReductionAlgorithmsMatchTheOrdersAndInvert) {
  CollectiveShape shape;
  shape.ranks = 4;
  for (Algorithm algorithm : collectives::all_algorithms()) {
    SCOPED_TRACE(std::string(collectives::algorithm_name(algorithm)));
    const std::optional<ReductionAlgorithm> order = collectives::reduction_algorithm_of(algorithm);
    if (algorithm == Algorithm::torus || algorithm == Algorithm::bidirectional_torus) {
      EXPECT_FALSE(order.has_value());
      continue;
    }
    ASSERT_TRUE(order.has_value());
    EXPECT_EQ(collectives::reduction_order(algorithm, shape).algorithm, *order);
    EXPECT_EQ(collectives::algorithm_folding_as(*order), algorithm);
  }
  EXPECT_EQ(collectives::algorithm_folding_as(ReductionAlgorithm::torus), std::nullopt);
  EXPECT_EQ(collectives::algorithm_folding_as(ReductionAlgorithm::bidirectional_torus),
            std::nullopt);
  EXPECT_EQ(collectives::algorithm_folding_as(ReductionAlgorithm::gloo_ring), std::nullopt);
}

TEST(CollectiveSchedules, AutomaticChoiceFollowsSizeAndTopology) {
  CollectiveShape shape{.kind = CollectiveKind::all_reduce, .ranks = 8, .elements = 16};
  EXPECT_EQ(collectives::choose_algorithm(shape, topology::TopologyTraits{}),
            Algorithm::halving_doubling);
  shape.ranks = 6;
  EXPECT_EQ(collectives::choose_algorithm(shape, topology::TopologyTraits{}),
            Algorithm::double_binary_tree);
  shape.elements = 1 << 20;
  EXPECT_EQ(collectives::choose_algorithm(shape, topology::TopologyTraits{}), Algorithm::ring);
  shape.torus_dims = {2, 3};
  EXPECT_EQ(collectives::choose_algorithm(shape, topology::TopologyTraits{.grid = true}),
            Algorithm::torus);
  EXPECT_EQ(collectives::choose_algorithm(
                shape, topology::TopologyTraits{.grid = true, .wrap_around = true}),
            Algorithm::bidirectional_torus);
  // One rule for the large reduce-scatter and all-gather, as for the all-reduce; the ring where
  // the tori cannot run (6 elements over 6 ranks are small; 2^20 + 1 do not split into 6 shards)
  // or the grid has one dimension.
  for (CollectiveKind kind : {CollectiveKind::reduce_scatter, CollectiveKind::all_gather}) {
    shape.kind = kind;
    shape.elements = 6 << 20;
    EXPECT_EQ(collectives::choose_algorithm(shape, topology::TopologyTraits{.grid = true}),
              Algorithm::torus);
    EXPECT_EQ(collectives::choose_algorithm(
                  shape, topology::TopologyTraits{.grid = true, .wrap_around = true}),
              Algorithm::bidirectional_torus);
    EXPECT_EQ(collectives::choose_algorithm(shape, topology::TopologyTraits{}), Algorithm::ring);
    shape.elements = 6;
    EXPECT_EQ(collectives::choose_algorithm(shape, topology::TopologyTraits{.grid = true}),
              Algorithm::ring);
  }
  // Small is the whole buffer's bytes: an all-gather of 6 x 16 KiB shards (96 KiB out) is small,
  // of 6 x 64 KiB (384 KiB out) is not, though each rank's shard is below 256 KiB.
  shape.kind = CollectiveKind::all_gather;
  shape.elements = 4096;
  EXPECT_EQ(collectives::choose_algorithm(shape, topology::TopologyTraits{.grid = true}),
            Algorithm::ring);
  shape.elements = 16384;
  EXPECT_EQ(collectives::choose_algorithm(shape, topology::TopologyTraits{.grid = true}),
            Algorithm::torus);
  shape.kind = CollectiveKind::reduce_scatter;
  shape.elements = (1 << 20) + 1;
  EXPECT_EQ(collectives::choose_algorithm(shape, topology::TopologyTraits{.grid = true}),
            Algorithm::ring);
  shape.torus_dims = {6};
  shape.elements = 6 << 20;
  EXPECT_EQ(collectives::choose_algorithm(shape, topology::TopologyTraits{.grid = true}),
            Algorithm::ring);
  shape.kind = CollectiveKind::permute;
  EXPECT_EQ(collectives::choose_algorithm(shape, topology::TopologyTraits{.grid = true}),
            Algorithm::direct);
}

TEST(CollectiveSchedules, UnsupportedShapesAreRefused) {
  const CollectiveShape six{.kind = CollectiveKind::all_reduce, .ranks = 6, .elements = 6};
  EXPECT_FALSE(collectives::supports(Algorithm::halving_doubling, six));
  EXPECT_FALSE(collectives::supports(Algorithm::torus, six));
  EXPECT_FALSE(collectives::supports(Algorithm::bidirectional_torus, six));
  EXPECT_THROW(collectives::build_schedule(Algorithm::halving_doubling, six), Error);
  CollectiveShape grid = six;
  grid.torus_dims = {2, 3};
  EXPECT_TRUE(collectives::supports(Algorithm::torus, grid));
  EXPECT_TRUE(collectives::supports(Algorithm::bidirectional_torus, grid));
  grid.torus_dims = {2, 2};
  EXPECT_FALSE(collectives::supports(Algorithm::torus, grid));
  EXPECT_FALSE(collectives::supports(Algorithm::bidirectional_torus, grid));
  grid.torus_dims = {2, 3};
  grid.kind = CollectiveKind::all_gather;  // both tori gather (the bidirectional one in pieces)
  EXPECT_TRUE(collectives::supports(Algorithm::torus, grid));
  EXPECT_TRUE(collectives::supports(Algorithm::bidirectional_torus, grid));
  grid.kind = CollectiveKind::reduce_scatter;  // as the ring: shards split evenly
  EXPECT_TRUE(collectives::supports(Algorithm::torus, grid));
  EXPECT_TRUE(collectives::supports(Algorithm::bidirectional_torus, grid));
  grid.elements = 7;
  EXPECT_FALSE(collectives::supports(Algorithm::torus, grid));
  EXPECT_FALSE(collectives::supports(Algorithm::bidirectional_torus, grid));
  EXPECT_FALSE(collectives::supports(Algorithm::ring, grid));
  EXPECT_THROW(collectives::build_schedule(Algorithm::torus, grid), Error);
  grid.kind = CollectiveKind::all_to_all;
  grid.elements = 6;
  EXPECT_FALSE(collectives::supports(Algorithm::torus, grid));
}

}  // namespace
}  // namespace spmd
