// The torus's reduce-scatter and all-gather (collectives/torus.cc) on a TPU-like slice: carried
// message by message over the torus's links each takes exactly its closed form (no two of its
// messages in a step share a link), the fast path gives the same, the reduce-scatter's bits are
// the reference's folding in the torus order, the all-gather's are the inputs concatenated, and
// on a square torus a reduce-scatter and an all-gather take as long as the all-reduce.
// `ctest -R TorusCollectives` runs them. Case count from RC_PARAMS (CI: max_success=1000).

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <optional>
#include <string>

#include "collectives/algorithm.h"
#include "reference/elementwise.h"
#include "reference/fold_reduce.h"
#include "sim/machine.h"
#include "support/random_array.h"
#include "tests/generators.h"
#include "tests/test_machines.h"

namespace spmd {
namespace {

using collectives::Algorithm;
using collectives::CollectiveKind;


int product(const std::vector<int>& dims) {
  int n = 1;
  for (int d : dims) n *= d;
  return n;
}

using test_machines::ici_torus_machine;
using test_machines::kIci;
using test_machines::torus_axis_names;
using test_machines::torus_run_options;

struct OpRun {
  std::vector<Array> inputs;  // per device (empty when cost only)
  std::vector<Array> outputs;
  sim::CollectiveRecord record;
  std::uint64_t closed_form_groups = 0;
};

// `kind` (psum_scatter or all_gather, tiled, along axis 0) over every device of a mesh laid on the
// torus's dims, one axis per dimension; `elements` per device in. `algorithm` unset: the
// automatic choice.
OpRun run_over_all(const std::vector<int>& dims, CollectiveKind kind,
                   std::optional<Algorithm> algorithm, std::int64_t elements, bool cost_only,
                   bool fast_path) {
  const sim::MachineSpec spec = ici_torus_machine(dims);
  const std::vector<std::string> names = torus_axis_names(dims.size());
  const Mesh mesh(std::vector<int>(dims.begin(), dims.end()), names);
  sim::Machine machine(spec, torus_run_options(algorithm, cost_only, fast_path));
  const AxisNames axes(names);
  const auto op = [&](Context& ctx, const Array& x) {
    return kind == CollectiveKind::reduce_scatter ? ctx.psum_scatter(x, axes, 0, true)
                                                  : ctx.all_gather(x, axes, 0, true);
  };
  OpRun run;
  std::vector<Values> inputs(static_cast<std::size_t>(spec.devices));
  if (!cost_only) {
    run.inputs = random_per_device(DType::float32, {elements}, spec.devices, 5,
                                   {.max_exponent = 0});
    for (std::size_t d = 0; d < inputs.size(); ++d) inputs[d] = {run.inputs[d]};
  }
  const std::vector<Values> outputs = machine.run(
      mesh, inputs,
      [&](Context& ctx, const Values& xs) {
        if (cost_only) {
          CollectiveCall call;
          call.op = kind == CollectiveKind::reduce_scatter ? CollectiveOp::psum_scatter
                                                           : CollectiveOp::all_gather;
          call.axes = axes;
          call.tiled = true;
          ctx.collective_cost(call, DType::float32, {elements});
          return Values{};
        }
        return Values{op(ctx, xs[0])};
      },
      false);
  for (const Values& out : outputs) {
    if (!out.empty()) run.outputs.push_back(out[0]);
  }
  run.record = machine.cost_log().collectives.at(0);
  run.closed_form_groups = machine.cost_log().closed_form_groups;
  return run;
}

collectives::CollectiveShape shape_of(const std::vector<int>& dims, CollectiveKind kind,
                                      std::int64_t elements) {
  return {.kind = kind, .ranks = product(dims), .elements = elements, .torus_dims = dims};
}

std::int64_t closed_form_ps(Algorithm algorithm, const collectives::CollectiveShape& shape) {
  return collectives::closed_form_time_ps(algorithm, shape, kIci.latency_ps,
                                          kIci.bandwidth_bytes_per_s);
}

std::int64_t duration_ps(const sim::CollectiveRecord& record) {
  return record.end_ps - record.start_ps;
}

// Rank d's block of the reduce-scatter, folded as the torus order folds it.
std::vector<Array> reference_reduce_scatter(const std::vector<Array>& inputs,
                                            const collectives::CollectiveShape& shape) {
  const ReductionOrder order = collectives::reduction_order(Algorithm::torus, shape);
  const std::int64_t block = shape.elements / shape.ranks;
  std::vector<Array> results;
  for (int d = 0; d < shape.ranks; ++d) {
    std::vector<Array> blocks;
    for (const Array& x : inputs) blocks.push_back(slice(x, 0, d * block, (d + 1) * block));
    results.push_back(reduce_with_tree(blocks, ReduceOp::sum,
                                       order.reduce_scatter_fold(shape.ranks, d), order));
  }
  return results;
}

// Carried and fast-path runs against each other, the closed form and the reference (the bits
// the torus order folds for a reduce-scatter, the inputs concatenated for an all-gather): the
// first disagreement, or nothing.
std::string torus_op_mismatch(const std::vector<int>& dims, CollectiveKind kind,
                              std::int64_t elements) {
  const OpRun carried = run_over_all(dims, kind, Algorithm::torus, elements, false, false);
  const OpRun fast = run_over_all(dims, kind, Algorithm::torus, elements, false, true);
  const collectives::CollectiveShape shape = shape_of(dims, kind, elements);
  if (carried.record.algorithm != "torus" || !carried.record.algorithm_note.empty()) {
    return "ran " + carried.record.algorithm + ": " + carried.record.algorithm_note;
  }
  if (duration_ps(carried.record) != closed_form_ps(Algorithm::torus, shape)) {
    return "carried " + std::to_string(duration_ps(carried.record)) + " ps, closed form " +
           std::to_string(closed_form_ps(Algorithm::torus, shape)) + " ps";
  }
  if (duration_ps(fast.record) != duration_ps(carried.record) || fast.closed_form_groups != 1) {
    return "fast path " + std::to_string(duration_ps(fast.record)) + " ps in " +
           std::to_string(fast.closed_form_groups) + " closed-form groups";
  }
  const std::vector<Array> expected =
      kind == CollectiveKind::reduce_scatter
          ? reference_reduce_scatter(carried.inputs, shape)
          : std::vector<Array>(carried.inputs.size(), concatenate(carried.inputs, 0));
  if (carried.outputs.size() != expected.size() || fast.outputs.size() != expected.size()) {
    return "outputs for " + std::to_string(carried.outputs.size()) + " devices";
  }
  for (std::size_t d = 0; d < expected.size(); ++d) {
    if (!carried.outputs[d].bitwise_equal(expected[d])) return "carried bits of device " + std::to_string(d);
    if (!fast.outputs[d].bitwise_equal(expected[d])) return "fast-path bits of device " + std::to_string(d);
  }
  return "";
}

TEST(TorusCollectives, ReduceScatterOnA4x4And2x4x2TorusTakesItsClosedFormAndTheReferenceBits) {
  for (const std::vector<int>& dims : {std::vector<int>{4, 4}, std::vector<int>{2, 4, 2}}) {
    SCOPED_TRACE(::testing::PrintToString(dims));
    EXPECT_EQ(torus_op_mismatch(dims, CollectiveKind::reduce_scatter, 16 * 37), "");
  }
}

// 1001 elements a device: the gathered blocks split unevenly along no dimension (each is whole
// shards), but the shard itself is odd-sized.
TEST(TorusCollectives, AllGatherOnA4x4And2x4x2TorusTakesItsClosedFormAndConcatenates) {
  for (const std::vector<int>& dims : {std::vector<int>{4, 4}, std::vector<int>{2, 4, 2}}) {
    SCOPED_TRACE(::testing::PrintToString(dims));
    EXPECT_EQ(torus_op_mismatch(dims, CollectiveKind::all_gather, 1001), "");
  }
}

// A reduce-scatter whose elements do not split into one shard a rank: the torus cannot run it
// (as the ring cannot), and says so.
TEST(TorusCollectives, AReduceScatterThatDoesNotSplitEvenlyIsRefusedByName) {
  const collectives::CollectiveShape shape = shape_of({4, 4}, CollectiveKind::reduce_scatter, 17);
  EXPECT_FALSE(collectives::supports(Algorithm::torus, shape));
  try {
    static_cast<void>(collectives::build_schedule(Algorithm::torus, shape));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "algorithm torus cannot run reduce_scatter over 16 ranks, expected a supported "
                 "algorithm");
  }
}

// On a 4x4 torus the reduce-scatter's blocks are V/4 then V/16 for 3 steps each, as the
// all-reduce's first half (dimension 1 first there, dimension 0 first here: the same sizes), so a
// reduce-scatter and an all-gather of the result take the all-reduce's time, each half of it.
TEST(TorusCollectives, OnASquareTorusReduceScatterAndAllGatherEachTakeHalfTheAllReduce) {
  const std::vector<int> dims = {4, 4};
  const std::int64_t elements = std::int64_t{1} << 26;  // 256 MiB of float32
  const std::int64_t all_reduce_ps =
      closed_form_ps(Algorithm::torus, shape_of(dims, CollectiveKind::all_reduce, elements));
  const collectives::CollectiveShape scatter =
      shape_of(dims, CollectiveKind::reduce_scatter, elements);
  const collectives::CollectiveShape gather =
      shape_of(dims, CollectiveKind::all_gather, elements / 16);
  EXPECT_EQ(2 * closed_form_ps(Algorithm::torus, scatter), all_reduce_ps);
  EXPECT_EQ(2 * closed_form_ps(Algorithm::torus, gather), all_reduce_ps);
  // Asked for on a torus machine, timed by the fast path.
  const OpRun torus =
      run_over_all(dims, CollectiveKind::reduce_scatter, Algorithm::torus, elements, true, true);
  EXPECT_EQ(torus.record.algorithm, "torus");
  EXPECT_EQ(duration_ps(torus.record), closed_form_ps(Algorithm::torus, scatter));
  // 6 steps of 1 us; 15/16 of 256 MiB one way over one link at 45 GB/s: 5592.4 us.
  EXPECT_NEAR(static_cast<double>(duration_ps(torus.record)) / 1e6, 5598.4, 0.1);
}

// An all-to-all sends each block straight to its destination, the shorter way round each
// dimension; a destination half way round goes + from an even coordinate and - from an odd one,
// so every link carries the same load each way. The scaling book's all-to-all time on a torus is
// then V * A / (4 * N * W), V the bytes of all N devices, A the longest dimension and W a
// link's rate both ways (90 GB/s here): on a 4x4 torus with 64 MiB a device that is
// 64 MiB / 90 GB/s = 745.65 us, and the simulator adds only the farthest message's latency
// (4 hops of 1 us). Had every half-way block gone + the busiest link would carry 4/3 as much.
TEST(TorusCollectives, AnAllToAllLoadsBothDirectionsAsTheScalingBookSays) {
  const std::vector<int> dims = {4, 4};
  const sim::MachineSpec spec = ici_torus_machine(dims);
  const std::vector<std::string> names = torus_axis_names(dims.size());
  const Mesh mesh(std::vector<int>(dims.begin(), dims.end()), names);
  sim::Machine machine(spec, torus_run_options(Algorithm::direct, true, true));
  const std::int64_t elements = std::int64_t{1} << 24;  // 64 MiB of float32 a device
  machine.run(
      mesh, std::vector<Values>(static_cast<std::size_t>(spec.devices)),
      [&](Context& ctx, const Values&) {
        CollectiveCall call;
        call.op = CollectiveOp::all_to_all;
        call.axes = AxisNames(names);
        call.split_axis = 0;
        call.concat_axis = 0;
        call.tiled = true;
        ctx.collective_cost(call, DType::float32, {elements});
        return Values{};
      },
      false);
  const sim::CollectiveRecord& record = machine.cost_log().collectives.at(0);
  EXPECT_EQ(record.algorithm, "direct");
  EXPECT_NEAR(static_cast<double>(duration_ps(record)) / 1e6, 745.65 + 4.0, 0.5);
}

// Two or three dimensions of sizes 1 to 4, the first at least 2 (a group of one runs nothing).
rc::Gen<std::vector<int>> torus_dims() {
  return rc::gen::exec([] {
    std::vector<int> dims = {*rc::gen::inRange(2, 5), *rc::gen::inRange(1, 5)};
    if (*rc::gen::arbitrary<bool>()) dims.push_back(*rc::gen::inRange(1, 5));
    return dims;
  });
}

// Any torus machine of two or three dimensions, any shard size but none (an empty collective
// moves nothing, and no closed form times it).
RC_GTEST_PROP(TorusCollectives, carried_fast_path_closed_form_and_reference_agree, ()) {
  const std::vector<int> dims = *torus_dims();
  const CollectiveKind kind =
      *rc::gen::element(CollectiveKind::reduce_scatter, CollectiveKind::all_gather);
  const std::int64_t per_rank = *rc::gen::inRange<std::int64_t>(1, 40);
  const std::int64_t elements =
      kind == CollectiveKind::reduce_scatter ? per_rank * product(dims) : per_rank;
  RC_ASSERT(torus_op_mismatch(dims, kind, elements) == "");
}

}  // namespace
}  // namespace spmd
