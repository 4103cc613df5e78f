// The bidirectional torus on a TPU-like slice (collectives/bidirectional_torus.cc): carried message
// by message over a torus's links it takes exactly its closed form (no two of its messages in a
// step share a link), the fast path gives the same, the reference folding in its order gives the
// bits the simulator does, and a large all-reduce's, reduce-scatter's and all-gather's busbw is
// about 4x the torus algorithm's on a 4x4 torus (both directions of both dimensions). `ctest -R
// BidirectionalTorus` runs them.

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "collectives/algorithm.h"
#include "reference/fold_reduce.h"
#include "sim/machine.h"
#include "support/random_array.h"
#include "tests/test_machines.h"

namespace spmd {
namespace {

using collectives::Algorithm;

using test_machines::ici_torus_machine;
using test_machines::kIci;
using test_machines::torus_axis_names;
using test_machines::torus_run_options;

struct OpRun {
  std::vector<Values> outputs;
  sim::CollectiveRecord record;
  std::uint64_t closed_form_groups = 0;
};

// `op` (psum, or a tiled psum_scatter or all_gather along axis 0) over every device of a mesh
// laid on the torus's dims, one axis per dimension, `elements` in on each device. `algorithm`
// unset: the automatic choice.
OpRun run_over_all(const std::vector<int>& dims, CollectiveOp op,
                   std::optional<Algorithm> algorithm, std::int64_t elements, bool cost_only,
                   bool fast_path) {
  const sim::MachineSpec spec = ici_torus_machine(dims);
  const std::vector<std::string> names = torus_axis_names(dims.size());
  const Mesh mesh(std::vector<int>(dims.begin(), dims.end()), names);
  sim::Machine machine(spec, torus_run_options(algorithm, cost_only, fast_path));
  const AxisNames axes(names);
  OpRun run;
  if (cost_only) {  // no data: 256 MiB a device would not fit a test
    machine.run(
        mesh, std::vector<Values>(static_cast<std::size_t>(spec.devices)),
        [&](Context& ctx, const Values&) {
          CollectiveCall call;
          call.op = op;
          call.axes = axes;
          call.tiled = op != CollectiveOp::psum;
          ctx.collective_cost(call, DType::float32, {elements});
          return Values{};
        },
        false);
  } else {
    std::vector<Values> inputs;
    for (Array& x :
         random_per_device(DType::float32, {elements}, spec.devices, 11, {.max_exponent = 0})) {
      inputs.push_back({std::move(x)});
    }
    run.outputs = machine.run(
        mesh, inputs,
        [&](Context& ctx, const Values& xs) {
          switch (op) {
            case CollectiveOp::psum_scatter: return Values{ctx.psum_scatter(xs[0], axes, 0, true)};
            case CollectiveOp::all_gather: return Values{ctx.all_gather(xs[0], axes, 0, true)};
            default: return Values{ctx.psum(xs[0], axes)};
          }
        },
        false);
  }
  run.record = machine.cost_log().collectives.at(0);
  run.closed_form_groups = machine.cost_log().closed_form_groups;
  return run;
}

OpRun psum_all(const std::vector<int>& dims, std::optional<Algorithm> algorithm,
               std::int64_t elements, bool cost_only, bool fast_path) {
  return run_over_all(dims, CollectiveOp::psum, algorithm, elements, cost_only, fast_path);
}

std::int64_t closed_form_ps(Algorithm algorithm, const std::vector<int>& dims,
                            std::int64_t elements) {
  collectives::CollectiveShape shape;
  shape.ranks = 1;
  for (int d : dims) shape.ranks *= d;
  shape.elements = elements;
  shape.element_bytes = 4;
  shape.torus_dims = dims;
  return collectives::closed_form_time_ps(algorithm, shape, kIci.latency_ps,
                                          kIci.bandwidth_bytes_per_s);
}

std::int64_t duration_ps(const sim::CollectiveRecord& record) {
  return record.end_ps - record.start_ps;
}

// Uneven sizes on purpose: parts, blocks and pieces that do not divide evenly.
TEST(BidirectionalTorus, CarriedOverTheTorusLinksItTakesItsClosedFormAndTheReferenceBits) {
  for (const std::vector<int>& dims : {std::vector<int>{4, 4}, std::vector<int>{4, 3},
                                       std::vector<int>{3, 3, 2}, std::vector<int>{5, 1}}) {
    SCOPED_TRACE(::testing::PrintToString(dims));
    const std::int64_t elements = 1001;
    const OpRun carried = psum_all(dims, Algorithm::bidirectional_torus, elements, false, false);
    const OpRun fast = psum_all(dims, Algorithm::bidirectional_torus, elements, false, true);
    EXPECT_EQ(carried.record.algorithm, "bidirectional_torus");
    EXPECT_EQ(carried.record.algorithm_note, "");
    EXPECT_EQ(duration_ps(fast.record), duration_ps(carried.record));
    for (std::size_t d = 0; d < carried.outputs.size(); ++d) {
      EXPECT_TRUE(fast.outputs[d][0].bitwise_equal(carried.outputs[d][0])) << d;
    }
    // A dimension of size 2 sends both directions' passes over its one link each way: they
    // share it, so neither the closed form nor the fast path applies there.
    const bool shares_a_link = std::find(dims.begin(), dims.end(), 2) != dims.end();
    if (shares_a_link) {
      EXPECT_EQ(fast.closed_form_groups, 0u);
      EXPECT_GT(duration_ps(carried.record),
                closed_form_ps(Algorithm::bidirectional_torus, dims, elements));
    } else {
      EXPECT_EQ(fast.closed_form_groups, 1u);
      EXPECT_EQ(duration_ps(carried.record),
                closed_form_ps(Algorithm::bidirectional_torus, dims, elements));
    }
    // The reference, folding every group in the algorithm's order, gives the simulator's bits.
    collectives::CollectiveShape shape{.ranks = static_cast<int>(carried.outputs.size()),
                                       .elements = elements,
                                       .torus_dims = dims};
    std::vector<Array> inputs;
    for (Array& x :
         random_per_device(DType::float32, {elements}, shape.ranks, 11, {.max_exponent = 0})) {
      inputs.push_back(std::move(x));
    }
    const Array expected = all_reduce(
        inputs, ReduceOp::sum, collectives::reduction_order(Algorithm::bidirectional_torus, shape));
    for (const Values& out : carried.outputs) EXPECT_TRUE(out[0].bitwise_equal(expected));
  }
}

// Both algorithms take 12 steps of 1 us latency; the torus's steps carry V/4 (3 steps) then V/16
// (3 steps) one way along one dimension, twice (reduce-scatter, all-gather); the bidirectional
// torus's four passes carry V/16 then V/64 each, all four at once on different links: a quarter
// of the bytes per step. With V = 256 MiB the torus's bandwidth term is
// 2 x 15/16 x 256 MiB / 45 GB/s = 11185 us, the bidirectional torus's 2796 us, so the ratio is
// (11185 + 12) / (2796 + 12) = 3.987: within 1% of 4, and below it only by the latency.
TEST(BidirectionalTorus, BusbwOfALargeAllReduceOnA4x4TorusIsAbout4xTheTorusAlgorithms) {
  const std::vector<int> dims = {4, 4};
  const std::int64_t elements = std::int64_t{1} << 26;  // 256 MiB of float32
  const OpRun torus = psum_all(dims, Algorithm::torus, elements, true, true);
  const OpRun both = psum_all(dims, Algorithm::bidirectional_torus, elements, true, true);
  EXPECT_EQ(duration_ps(torus.record), closed_form_ps(Algorithm::torus, dims, elements));
  EXPECT_EQ(duration_ps(both.record),
            closed_form_ps(Algorithm::bidirectional_torus, dims, elements));
  const double ratio = both.record.busbw_bytes_per_s / torus.record.busbw_bytes_per_s;
  EXPECT_GT(ratio, 3.96);
  EXPECT_LT(ratio, 4.0);
  // busbw counts 2(n-1)/n = 2 x 15/16 of V per rank: the torus reaches one link's one-way rate
  // less its latency, 45 x 11185 / 11197 = 44.95 GB/s; the bidirectional torus
  // 4 x 45 x 2796 / 2808 = 179.2 GB/s.
  EXPECT_NEAR(torus.record.busbw_bytes_per_s / 1e9, 44.95, 0.02);
  EXPECT_NEAR(both.record.busbw_bytes_per_s / 1e9, 179.2, 0.1);
}

// The reduce-scatter and all-gather split every shard between the 2D passes: each rank still
// ends with its own shard (reduce-scatter, folded piece by piece as reduce_scatter_plan says) or
// everyone's in rank order (all-gather), on grids whose shards, pieces and blocks are uneven.
TEST(BidirectionalTorus, ReduceScatterAndAllGatherGiveTheReferenceBits) {
  for (const std::vector<int>& dims : {std::vector<int>{4, 4}, std::vector<int>{4, 3},
                                       std::vector<int>{3, 3, 2}, std::vector<int>{5, 1}}) {
    SCOPED_TRACE(::testing::PrintToString(dims));
    collectives::CollectiveShape shape{
        .kind = collectives::CollectiveKind::reduce_scatter, .ranks = 1, .torus_dims = dims};
    for (int d : dims) shape.ranks *= d;
    shape.elements = shape.ranks * 37;  // 37 elements a shard: pieces of 9 and 10 (or 12 and 13)
    std::vector<Array> inputs;
    for (Array& x : random_per_device(DType::float32, {shape.elements}, shape.ranks, 11,
                                      {.max_exponent = 0})) {
      inputs.push_back(std::move(x));
    }
    const OpRun scattered =
        run_over_all(dims, CollectiveOp::psum_scatter, Algorithm::bidirectional_torus,
                     shape.elements, false, true);
    EXPECT_EQ(scattered.record.algorithm, "bidirectional_torus");
    EXPECT_EQ(scattered.record.algorithm_note, "");
    // A block is one message however many shards it holds: carried over the torus's links it
    // takes the closed form, which the fast path then uses (not on a dimension of size 2, whose
    // two directions share one link).
    const OpRun carried =
        run_over_all(dims, CollectiveOp::psum_scatter, Algorithm::bidirectional_torus,
                     shape.elements, false, false);
    EXPECT_EQ(duration_ps(carried.record), duration_ps(scattered.record));
    if (std::find(dims.begin(), dims.end(), 2) == dims.end()) {
      EXPECT_EQ(scattered.closed_form_groups, 1u);
      EXPECT_EQ(duration_ps(carried.record),
                collectives::closed_form_time_ps(Algorithm::bidirectional_torus, shape,
                                                 kIci.latency_ps, kIci.bandwidth_bytes_per_s));
    }
    const ReductionOrder order =
        collectives::reduction_order(Algorithm::bidirectional_torus, shape);
    const std::int64_t shard = shape.elements / shape.ranks;
    for (int r = 0; r < shape.ranks; ++r) {
      std::vector<Array> blocks;
      for (const Array& x : inputs) blocks.push_back(slice(x, 0, r * shard, (r + 1) * shard));
      const Array expected = reduce_with_plan(
          blocks, ReduceOp::sum, order.reduce_scatter_plan(shape.ranks, r, shard), order);
      EXPECT_TRUE(scattered.outputs[static_cast<std::size_t>(r)][0].bitwise_equal(expected)) << r;
    }
    const OpRun gathered = run_over_all(dims, CollectiveOp::all_gather,
                                        Algorithm::bidirectional_torus, 37, false, true);
    EXPECT_EQ(gathered.record.algorithm, "bidirectional_torus");
    std::vector<Array> shards;
    for (const Array& x :
         random_per_device(DType::float32, {37}, shape.ranks, 11, {.max_exponent = 0})) {
      shards.push_back(x);
    }
    const Array everyone = concatenate(shards, 0);
    for (const Values& out : gathered.outputs) EXPECT_TRUE(out[0].bitwise_equal(everyone));
  }
}

// As the all-reduce's: the torus reduce-scatters one dimension one way at a time, 15/16 of the
// buffer over one link; the bidirectional torus's four passes move a quarter each, at once, over
// four links. On a 4x4 torus a large reduce-scatter's and all-gather's busbw is about 4x the
// torus algorithm's: 45 GB/s (one link one way) against 180 GB/s, the scaling book's
// B / (2 D W) for D = 2 dimensions.
TEST(BidirectionalTorus, BusbwOfALargeReduceScatterAndAllGatherIsAbout4xTheTorusAlgorithms) {
  const std::vector<int> dims = {4, 4};
  for (CollectiveOp op : {CollectiveOp::psum_scatter, CollectiveOp::all_gather}) {
    SCOPED_TRACE(collective_op_name(op));
    // 256 MiB of float32 in all: the reduce-scatter's input, the all-gather's output.
    const std::int64_t elements =
        op == CollectiveOp::psum_scatter ? std::int64_t{1} << 26 : std::int64_t{1} << 22;
    const OpRun torus = run_over_all(dims, op, Algorithm::torus, elements, true, true);
    const OpRun both = run_over_all(dims, op, std::nullopt, elements, true, true);
    EXPECT_EQ(both.record.algorithm, "bidirectional_torus");
    const double ratio = both.record.busbw_bytes_per_s / torus.record.busbw_bytes_per_s;
    EXPECT_GT(ratio, 3.96);
    EXPECT_LT(ratio, 4.0);
    EXPECT_NEAR(torus.record.busbw_bytes_per_s / 1e9, 44.95, 0.05);
    EXPECT_NEAR(both.record.busbw_bytes_per_s / 1e9, 179.2, 0.3);
  }
}

TEST(BidirectionalTorus, IsTheAutomaticChoiceForALargeAllReduceOnATorusButNotOnAMesh) {
  const collectives::CollectiveShape shape{.kind = collectives::CollectiveKind::all_reduce,
                                           .ranks = 16,
                                           .elements = 1 << 20,
                                           .torus_dims = {4, 4}};
  EXPECT_EQ(collectives::choose_algorithm(
                shape, topology::TopologyTraits{.grid = true, .wrap_around = true}),
            Algorithm::bidirectional_torus);
  EXPECT_EQ(collectives::choose_algorithm(shape, topology::TopologyTraits{.grid = true}),
            Algorithm::torus);
  const OpRun chosen = psum_all({4, 4}, std::nullopt, 1 << 20, true, true);
  EXPECT_EQ(chosen.record.algorithm, "bidirectional_torus");
}

}  // namespace
}  // namespace spmd
