// Which device holds which block (JAX named_sharding.py; the closed form of
// docs/jax-checklist.md#block-assignment), replica ids, host read-back, and the README's example
// compiling and computing what it says.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reference/elementwise.h"
#include "reference/partition_spec.h"
#include "reference/pmap.h"
#include "reference/reference_backend.h"
#include "reference/shard_map.h"

namespace spmd {
namespace {

Array iota(Shape shape) {
  std::vector<std::int32_t> values(static_cast<std::size_t>(element_count(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(i);
  return Array::from_values<std::int32_t>(std::move(shape), values);
}

std::vector<std::int32_t> values_of(const Array& a) {
  auto v = a.values<std::int32_t>();
  return {v.begin(), v.end()};
}

TEST(BlockAssignment, TupleEntryIsFirstAxisMajor) {
  // P(('x','y')) on mesh (2, 2): block b = c_x * size_y + c_y.
  const Mesh mesh({2, 2}, {"x", "y"});
  const PartitionSpec spec(std::vector<SpecEntry>{SpecEntry{"x", "y"}});
  const Array global = iota({8});
  EXPECT_EQ(values_of(device_block(global, spec, mesh, 1)), (std::vector<std::int32_t>{2, 3}));
  EXPECT_EQ(values_of(device_block(global, spec, mesh, 2)), (std::vector<std::int32_t>{4, 5}));
}

TEST(BlockAssignment, ReversedTupleEntryIsSecondAxisMajor) {
  // P(('y','x')): b = c_y * size_x + c_x, so device 1 (x=0, y=1) holds block 2.
  const Mesh mesh({2, 2}, {"x", "y"});
  const PartitionSpec spec(std::vector<SpecEntry>{SpecEntry{"y", "x"}});
  EXPECT_EQ(values_of(device_block(iota({8}), spec, mesh, 1)), (std::vector<std::int32_t>{4, 5}));
}

TEST(BlockAssignment, TwoDimensionsSplitIndependently) {
  // P('x', 'y') on mesh (2, 2) over a 4x4 array: device (1, 0) holds rows 2-3, columns 0-1.
  const Mesh mesh({2, 2}, {"x", "y"});
  const Array block = device_block(iota({4, 4}), PartitionSpec({{"x"}, {"y"}}), mesh, 2);
  EXPECT_EQ(block.shape(), (Shape{2, 2}));
  EXPECT_EQ(values_of(block), (std::vector<std::int32_t>{8, 9, 12, 13}));
}

TEST(ReplicaIds, ReplicasAreNumberedInDeviceOrder) {
  // P('x') on mesh (2, 3): the three devices along y hold the same block, replicas 0, 1, 2.
  const Mesh mesh({2, 3}, {"x", "y"});
  const PartitionSpec spec({{"x"}});
  std::vector<int> ids;
  for (int d = 0; d < mesh.device_count(); ++d) ids.push_back(replica_id(spec, mesh, d));
  EXPECT_EQ(ids, (std::vector<int>{0, 1, 2, 0, 1, 2}));
}

TEST(HostReadBack, FirstDeviceHoldingEachBlockIsRead) {
  // check_vma=False with an out spec that omits 'y': the block of device (x, y=0) is read.
  const Mesh mesh({2, 2}, {"x", "y"});
  std::vector<Array> per_device;
  for (int d = 0; d < 4; ++d) per_device.push_back(Array::from_values<std::int32_t>({1}, {d}));
  const Array global = assemble_global(per_device, PartitionSpec({{"x"}}), mesh);
  EXPECT_EQ(values_of(global), (std::vector<std::int32_t>{0, 2}));
}

TEST(SplitAndAssemble, BlockTransposeWithReorderedOutSpec) {
  // in P('i','j'), out P('j','i') on mesh (2, 2): block (a, b) lands at (b, a).
  const Mesh mesh({2, 2}, {"i", "j"});
  ReferenceBackend reference;
  ShardMapOptions options{.in_specs = {PartitionSpec({{"i"}, {"j"}})},
                          .out_specs = {PartitionSpec({{"j"}, {"i"}})}};
  const Values out = run_shard_map(reference, mesh, [](Context&, const Values& in) { return in; },
                                   options, {iota({2, 2})});
  EXPECT_EQ(values_of(out[0]), (std::vector<std::int32_t>{0, 2, 1, 3}));
}

TEST(CheckVma, AllGatherInvariantMayBeReturnedReplicated) {
  // all_gather's result varies along the axis (out_specs=P() is rejected); with
  // to='invarying' it is typed invariant and P() is accepted (jax/_src/lax/parallel.py
  // all_gather; docs/jax-checklist.md, 6. Collectives).
  const Mesh mesh({4}, {"i"});
  ReferenceBackend reference;
  ShardMapOptions options{.in_specs = {PartitionSpec({{"i"}})}, .out_specs = {PartitionSpec()}};
  auto varying = [](Context& ctx, const Values& in) -> Values {
    return {ctx.all_gather(in[0], "i", 0, true)};
  };
  auto invariant = [](Context& ctx, const Values& in) -> Values {
    return {ctx.all_gather_invariant(in[0], "i", 0, true)};
  };
  EXPECT_THROW(run_shard_map(reference, mesh, varying, options, {iota({4})}), Error);
  const Values out = run_shard_map(reference, mesh, invariant, options, {iota({4})});
  EXPECT_EQ(values_of(out[0]), (std::vector<std::int32_t>{0, 1, 2, 3}));
}

TEST(NestedMaps, PmapInsideAPmapBodyIsAnError) {
  ReferenceBackend reference;
  auto inner = pmap([](Context&, const Values& in) { return in; }, {.axis_name = "j"});
  auto outer = pmap([&](Context&, const Values& in) { return inner(reference, {stack(in, 0)}); },
                    {.axis_name = "i"});
  try {
    outer(reference, {iota({2, 3})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("nested pmap is not supported"));
  }
}

TEST(Readme, TourExampleComputesXTimesTheMeanOfY) {
  const Array x = Array::from_values<float>({4}, {1, 2, 3, 4});
  const Array y = Array::from_values<float>({4}, {2, 4, 6, 8});
  // The README's snippet, verbatim apart from the assertions.
  spmd::ReferenceBackend reference;  // JAX's XLA:CPU numerics by default
  auto normalize = spmd::pmap(
      [](spmd::Context& ctx, const spmd::Values& in) -> spmd::Values {
        return {spmd::mul(in[0], ctx.pmean(in[1], "i"))};
      },
      {.axis_name = "i", .in_axes = {0, 0}});
  spmd::Values out = normalize(reference, {x, y});
  auto v = out[0].values<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), (std::vector<float>{5, 10, 15, 20}));
}

}  // namespace
}  // namespace spmd
