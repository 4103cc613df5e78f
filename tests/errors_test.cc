// One test per user error: the message names the field and the value, in JAX's words where JAX
// has words for it (jax/_src/pmap.py, shard_map.py, lax/parallel.py, mesh.py; the errors are
// listed in docs/jax-checklist.md). Deadlocks are reported, never hung: each of those tests
// finishes in milliseconds.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>

#include "reference/collective_groups.h"
#include "reference/elementwise.h"
#include "reference/partition_spec.h"
#include "reference/pmap.h"
#include "reference/reference_backend.h"
#include "reference/shard_map.h"
#include "tests/error_of.h"
#include "tests/programs.h"

namespace spmd {
namespace {

using test_errors::error_of;

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

Array iota_f32(Shape shape) {
  std::vector<float> v(static_cast<std::size_t>(element_count(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return Array::from_values<float>(std::move(shape), v);
}

PartitionSpec spec(std::vector<SpecEntry> entries) { return PartitionSpec(std::move(entries)); }

Values pmap_on(const DeviceFunction& f, const Values& args, PmapOptions options,
               int backend_devices = 8) {
  ReferenceBackend reference({}, backend_devices);
  return run_pmap(reference, f, options, args);
}

const DeviceFunction kIdentity = [](Context&, const Values& in) { return in; };

// Runs `body` on a 1-D mesh 'i' of 4 devices, device r holding the block r of `x` (split on
// dim 0), under shard_map with check_vma as given.
std::string collective_error(const std::function<Array(Context&, const Array&)>& body,
                             const Array& x, bool check_vma = true) {
  return error_of([&] {
    shard_map_on(
        Mesh({4}, {"i"}),
        [&](Context& ctx, const Values& in) -> Values { return {body(ctx, in[0])}; }, {x},
        {spec({{"i"}})}, {spec({{"i"}})}, check_vma);
  });
}

// ---- Mesh

TEST(MeshErrors, NdimOfDevicesMustEqualTheNumberOfAxisNames) {
  EXPECT_THAT(error_of([] {
                Mesh({2, 2}, {"x"});
              }),
              AllOf(HasSubstr("Mesh requires the ndim of its first argument (`devices`) to equal "
                              "the length of its second argument (`axis_names`)"),
                    HasSubstr("devices.ndim == 2"), HasSubstr("len(axis_names) == 1")));
}

TEST(MeshErrors, AxisSizesMustBePositive) {
  EXPECT_THAT(error_of([] {
                Mesh({2, 0}, {"x", "y"});
              }),
              AllOf(HasSubstr("mesh.shape[1] = 0"), HasSubstr("positive")));
  EXPECT_THAT(error_of([] { Mesh({-3}, {"x"}); }), HasSubstr("mesh.shape[0] = -3"));
}

TEST(MeshErrors, AxisNamesMustBeUnique) {
  EXPECT_THAT(error_of([] {
                Mesh({2, 2}, {"x", "x"});
              }),
              AllOf(HasSubstr("mesh.axis_names"), HasSubstr("'x' twice")));
}

// ---- PartitionSpec

TEST(PartitionSpecErrors, DuplicateAxisIsRejected) {
  const Mesh mesh({2, 2}, {"x", "y"});
  EXPECT_THAT(error_of([&] {
                validate_spec(spec({{"x"}, {"y", "x"}}), mesh, "in_specs[0]");
              }),
              AllOf(HasSubstr("in_specs[0]"), HasSubstr("P('x', ('y', 'x'))"),
                    HasSubstr("duplicate entries for `x`")));
}

TEST(PartitionSpecErrors, UnknownAxisIsRejected) {
  const Mesh mesh({2, 2}, {"x", "y"});
  EXPECT_THAT(error_of([&] {
                shard_map_on(mesh, kIdentity, {iota_f32({4})}, {spec({{"w"}})}, {spec({{"x"}})});
              }),
              AllOf(HasSubstr("in_specs[0]"),
                    HasSubstr("Resource axis: w of P('w') is not found in mesh: ('x', 'y')")));
}

// ---- shard_map

TEST(ShardMapErrors, InSpecLongerThanTheRankIsRejected) {
  const Mesh mesh({4}, {"i"});
  const std::string message = error_of([&] {
    shard_map_on(mesh, kIdentity, {iota_f32({4})}, {spec({{"i"}, {}})}, {spec({})});
  });
  EXPECT_THAT(message, AllOf(HasSubstr("in_specs[0] is P('i', None) which has length 2"),
                             HasSubstr("float32[4]"), HasSubstr("rank 1 (and 1 < 2)")));
  EXPECT_THAT(message, Not(HasSubstr("P()")));
}

TEST(ShardMapErrors, ScalarWithANonEmptySpecGetsThePHint) {
  const Mesh mesh({2, 2}, {"x", "y"});
  const std::string message = error_of([&] {
    shard_map_on(mesh, kIdentity, {Array::scalar<float>(3.0f)}, {spec({{}})}, {spec({})});
  });
  EXPECT_THAT(message,
              AllOf(HasSubstr("in_specs[0] is P(None) which has length 1"), HasSubstr("rank 0"),
                    HasSubstr("consider using an in_specs entry of `P()`")));
}

TEST(ShardMapErrors, DimensionNotDivisibleByOneMeshAxis) {
  const Mesh mesh({8}, {"i"});
  EXPECT_THAT(
      error_of([&] {
        shard_map_on(mesh, kIdentity, {iota_f32({9})}, {spec({{"i"}})}, {spec({{"i"}})});
      }),
      AllOf(HasSubstr("not evenly divisible"), HasSubstr("args[0] of shape float32[9]"),
            HasSubstr("in_specs[0] of value P('i')"),
            HasSubstr("maps array axis 0 (of size 9) to mesh axis 'i' (of size 8), but 8 does "
                      "not evenly divide 9")));
}

TEST(ShardMapErrors, DimensionNotDivisibleByTupleOfMeshAxes) {
  const Mesh mesh({2, 2}, {"x", "y"});
  EXPECT_THAT(
      error_of([&] {
        shard_map_on(mesh, kIdentity, {iota_f32({3, 6})}, {spec({{}, {"x", "y"}})},
                     {spec({{}, {"x", "y"}})});
      }),
      AllOf(HasSubstr("maps array axis 1 (of size 6) to mesh axes ('x', 'y') (of total size 4), "
                      "but 4 does not evenly divide 6")));
}

TEST(ShardMapErrors, InSpecsCountMustMatchTheArguments) {
  const Mesh mesh({4}, {"i"});
  EXPECT_THAT(error_of([&] {
                shard_map_on(mesh, kIdentity, {iota_f32({4}), iota_f32({4})}, {spec({{"i"}})},
                             {spec({{"i"}})});
              }),
              AllOf(HasSubstr("in_specs has 1 entries"), HasSubstr("given 2 arguments")));
}

TEST(ShardMapErrors, OutSpecsCountMustMatchTheOutputs) {
  const Mesh mesh({4}, {"i"});
  EXPECT_THAT(error_of([&] {
                shard_map_on(mesh, kIdentity, {iota_f32({4})}, {spec({{"i"}})},
                             {spec({{"i"}}), spec({{"i"}})});
              }),
              AllOf(HasSubstr("out_specs has 2 entries"), HasSubstr("returned 1 values")));
}

// Conformance table row 35 (docs/jax-checklist.md#conformance-table): mesh (2,2), x (8,8) in
// P('x','y'), lambda x: 2*x, out P(None,'y') -> ValueError 'statically inferred'; OK with
// check_vma=False, or with a psum(x,'x') body.
TEST(ShardMapErrors, ReplicationThatCannotBeStaticallyInferredIsRejected) {
  const Mesh mesh({2, 2}, {"x", "y"});
  const DeviceFunction twice = [](Context&, const Values& in) -> Values {
    return {mul(in[0], Array::scalar<float>(2.0f))};
  };
  const Array x = iota_f32({8, 8});
  EXPECT_THAT(
      error_of([&] {
        shard_map_on(mesh, twice, {x}, {spec({{"x"}, {"y"}})}, {spec({{}, {"y"}})});
      }),
      AllOf(HasSubstr("can't be statically inferred"), HasSubstr("out_specs[0] is P(None, 'y')"),
            HasSubstr("replicated across mesh axes {x}"), HasSubstr("check_vma=False")));

  const Values unchecked = shard_map_on(mesh, twice, {x}, {spec({{"x"}, {"y"}})},
                                        {spec({{}, {"y"}})}, /*check_vma=*/false);
  EXPECT_EQ(unchecked[0].shape(), (Shape{4, 8}));  // the x = 0 blocks, doubled
  EXPECT_EQ(unchecked[0].values<float>()[9], 2.0f * 9.0f);

  const DeviceFunction summed = [](Context& ctx, const Values& in) -> Values {
    return {mul(ctx.psum(in[0], "x"), Array::scalar<float>(2.0f))};
  };
  const Values proven =
      shard_map_on(mesh, summed, {x}, {spec({{"x"}, {"y"}})}, {spec({{}, {"y"}})});
  EXPECT_EQ(proven[0].shape(), (Shape{4, 8}));
  EXPECT_EQ(proven[0].values<float>()[0], 2.0f * (0.0f + 32.0f));
}

TEST(ShardMapErrors, ReplicationOverSeveralAxesNamesThemAll) {
  const Mesh mesh({2, 2, 2}, {"x", "y", "z"});
  const DeviceFunction f = [](Context& ctx, const Values& in) -> Values {
    return {add(in[0], convert(ctx.axis_index({"y", "z"}), DType::float32))};
  };
  EXPECT_THAT(
      error_of([&] { shard_map_on(mesh, f, {iota_f32({8})}, {spec({{"x"}})}, {spec({{"x"}})}); }),
      AllOf(HasSubstr("out_specs[0] is P('x')"), HasSubstr("mesh axes {y, z}"),
            HasSubstr("possibly varying over {x, y, z}")));
}

// ---- pmap

TEST(PmapErrors, NoMappedArgument) {
  EXPECT_THAT(error_of([] { pmap_on(kIdentity, {iota_f32({4})}, {.in_axes = {std::nullopt}}); }),
              HasSubstr("pmap requires at least one argument with a mapped axis."));
}

TEST(PmapErrors, InconsistentMappedSizes) {
  EXPECT_THAT(error_of([] {
                pmap_on(kIdentity, {iota_f32({4}), iota_f32({3})}, {});
              }),
              AllOf(HasSubstr("pmap got inconsistent sizes for array axes to be mapped"),
                    HasSubstr("argument 0 has size 4"), HasSubstr("argument 1 of type float32[3]"),
                    HasSubstr("size 3")));
}

TEST(PmapErrors, InAxisOutOfRange) {
  EXPECT_THAT(
      error_of([] { pmap_on(kIdentity, {iota_f32({4})}, {.in_axes = {1}}); }),
      AllOf(HasSubstr("pmap in_axes[0] = 1"), HasSubstr("float32[4]"), HasSubstr("0 <= axis < 1")));
}

TEST(PmapErrors, NegativeInAxisIsNotSupported) {
  EXPECT_THAT(
      error_of([] {
        pmap_on(kIdentity, {iota_f32({4, 2})}, {.in_axes = {-1}});
      }),
      AllOf(HasSubstr("pmap in_axes[0] = -1"), HasSubstr("negative pmap axes are not supported")));
}

TEST(PmapErrors, StaticBroadcastedArgnumsBeyondOneArgumentUsesTheSingular) {
  // pmap.py: "... but was called with only {n} positional argument{'s' if n>1 else ''}."
  const std::string one =
      error_of([] { pmap_on(kIdentity, {iota_f32({4})}, {.static_broadcasted_argnums = {1}}); });
  EXPECT_THAT(one, HasSubstr("pmapped function has static_broadcasted_argnums=(1,) but was called "
                             "with only 1 positional argument. All static broadcasted arguments "
                             "must be passed positionally."));
  const std::string two = error_of([] {
    pmap_on(kIdentity, {iota_f32({4}), iota_f32({4})}, {.static_broadcasted_argnums = {0, 3}});
  });
  EXPECT_THAT(two, HasSubstr("static_broadcasted_argnums=(0, 3) but was called with only 2 "
                             "positional arguments."));
}

TEST(PmapErrors, AxisSizeMustMatchTheMappedSize) {
  EXPECT_THAT(error_of([] { pmap_on(kIdentity, {iota_f32({4})}, {.axis_size = 3}); }),
              HasSubstr("Specified axis_size 3 doesn't match received axis_size 4."));
}

TEST(PmapErrors, MoreDevicesThanTheBackendHas) {
  EXPECT_THAT(error_of([] { pmap_on(kIdentity, {iota_f32({4})}, {}, /*backend_devices=*/2); }),
              AllOf(HasSubstr("mapped axis size 4"), HasSubstr("only 2 are available"),
                    HasSubstr("'reference'")));
}

TEST(PmapErrors, EmptyDevicesList) {
  EXPECT_THAT(
      error_of([] { pmap_on(kIdentity, {iota_f32({4})}, {.devices = std::vector<int>{}}); }),
      HasSubstr("'devices' argument to pmap must be non-empty, or None."));
}

TEST(PmapErrors, OutAxesCountMustMatchTheOutputs) {
  EXPECT_THAT(error_of([] {
                pmap_on(kIdentity, {iota_f32({4})}, {.out_axes = {0, 0}});
              }),
              AllOf(HasSubstr("pmap out_axes has 2 entries"), HasSubstr("returned 1 values"),
                    HasSubstr("pytree structure error: different lengths of tuple")));
}

// ---- Collectives

TEST(CollectiveErrors, UnboundAxisNameIsANameErrorNamingTheApi) {
  // parallel.py: "Found an unbound axis name: {name}. To fix this, please call {api} under
  // `jax.shard_map`." with api psum for psum / pmax / pmin, reduce_scatter for psum_scatter.
  const Array x = iota_f32({8});
  EXPECT_THAT(collective_error([](Context& ctx, const Array& v) { return ctx.psum(v, "bad"); }, x),
              HasSubstr("NameError: Found an unbound axis name: bad. To fix this, please call psum "
                        "under `jax.shard_map`"));
  EXPECT_THAT(collective_error([](Context& ctx, const Array& v) { return ctx.pmax(v, "bad"); }, x),
              HasSubstr("please call psum under"));
  EXPECT_THAT(
      collective_error([](Context& ctx, const Array& v) { return ctx.all_gather(v, "bad"); }, x),
      HasSubstr("please call all_gather under"));
  EXPECT_THAT(collective_error(
                  [](Context& ctx, const Array& v) {
                    return ctx.psum_scatter(v, {"i", "bad"});
                  },
                  x),
              HasSubstr("unbound axis name: bad. To fix this, please call reduce_scatter under"));
  EXPECT_THAT(collective_error(
                  [](Context& ctx, const Array& v) {
                    return ctx.ppermute(v, "bad", {{0, 1}});
                  },
                  x),
              HasSubstr("please call ppermute under"));
  EXPECT_THAT(collective_error([](Context& ctx, const Array&) { return ctx.axis_index("bad"); }, x),
              HasSubstr("please call axis_index under"));
}

TEST(CollectiveErrors, AxisIndexGroupsMustCoverEveryIndex) {
  const Array x = iota_f32({8});
  EXPECT_THAT(collective_error(
                  [](Context& ctx, const Array& v) {
                    return ctx.pmax(v, "i", AxisIndexGroups{{0, 1}, {2}});
                  },
                  x),
              AllOf(HasSubstr("axis_index_groups must cover all indices exactly once"),
                    HasSubstr("list 3 indices, expected 4")));
}

TEST(CollectiveErrors, AxisIndexGroupsMustNotRepeatAnIndex) {
  const Array x = iota_f32({8});
  EXPECT_THAT(collective_error(
                  [](Context& ctx, const Array& v) {
                    return ctx.pmax(v, "i", AxisIndexGroups{{0, 1}, {1, 3}});
                  },
                  x),
              AllOf(HasSubstr("axis_index_groups must cover all indices exactly once"),
                    HasSubstr("index 1 is out of range or repeated")));
}

TEST(CollectiveErrors, PsumWithAxisIndexGroupsIsNotImplementedUnderCheckVma) {
  // parallel.py bind_psum_invariant: a bare NotImplementedError under shard_map(check_vma=True);
  // it works under pmap and under check_vma=False.
  const auto grouped = [](Context& ctx, const Array& v) {
    return ctx.psum(v, "i", AxisIndexGroups{{0, 1}, {2, 3}});
  };
  const Array x = iota_f32({4});
  EXPECT_THAT(collective_error(grouped, x),
              AllOf(HasSubstr("NotImplementedError"), HasSubstr("axis_index_groups"),
                    HasSubstr("check_vma=True")));
  EXPECT_THAT(collective_error(
                  [](Context& ctx, const Array& v) {
                    return ctx.pmean(v, "i", AxisIndexGroups{{0, 1}, {2, 3}});
                  },
                  x),
              HasSubstr("NotImplementedError"));

  const Values unchecked = shard_map_on(
      Mesh({4}, {"i"}),
      [&](Context& ctx, const Values& in) -> Values { return {grouped(ctx, in[0])}; }, {x},
      {spec({{"i"}})}, {spec({{"i"}})}, /*check_vma=*/false);
  EXPECT_EQ(
      std::vector<float>(unchecked[0].values<float>().begin(), unchecked[0].values<float>().end()),
      (std::vector<float>{1, 1, 5, 5}));
  ReferenceBackend reference;
  const Values pmapped = run_pmap(
      reference, [&](Context& ctx, const Values& in) -> Values { return {grouped(ctx, in[0])}; },
      {.axis_name = "i"}, {x});
  EXPECT_TRUE(pmapped[0].bitwise_equal(unchecked[0]));
}

TEST(CollectiveErrors, PpermuteDestinationsMustBeUnique) {
  const Array x = iota_f32({4});
  EXPECT_THAT(collective_error(
                  [](Context& ctx, const Array& v) {
                    return ctx.ppermute(v, "i", {{0, 1}, {1, 1}});
                  },
                  x),
              HasSubstr("ppermute sources and destinations must be unique, got ((0, 1), (1, 1))."));
  // Indices count from the end when negative, as in Python: -3 is 1 on an axis of 4.
  EXPECT_THAT(
      collective_error(
          [](Context& ctx, const Array& v) {
            return ctx.ppermute(v, "i", {{0, 1}, {2, -3}});
          },
          x),
      HasSubstr("ppermute sources and destinations must be unique, got ((0, 1), (2, -3))."));
}

TEST(CollectiveErrors, PshuffleOfANonPermutation) {
  const Array x = iota_f32({4});
  EXPECT_THAT(collective_error(
                  [](Context& ctx, const Array& v) {
                    return ctx.pshuffle(v, "i", {1, 1, 2, 3});
                  },
                  x),
              HasSubstr("`perm` does not represent a permutation: [1, 1, 2, 3]"));
  EXPECT_THAT(collective_error(
                  [](Context& ctx, const Array& v) {
                    return ctx.pshuffle(v, "i", {1, 2, 3});
                  },
                  x),
              HasSubstr("`perm` does not represent a permutation: [1, 2, 3]"));
}

TEST(CollectiveErrors, PshuffleLongerThanTheAxisNamesADeviceThatIsNotThere) {
  // pshuffle = ppermute(zip(perm, range(len(perm)))): on an axis of 2, [2, 0, 1] gives the pairs
  // (2, 0), (0, 1), (1, 2), and JAX 0.10.2 cannot look device 2 up in a group of 2.
  const DeviceFunction f = [](Context& ctx, const Values& in) -> Values {
    return {ctx.pshuffle(in[0], "i", {2, 0, 1})};
  };
  EXPECT_THAT(error_of([&] {
                shard_map_on(Mesh({2}, {"i"}), f, {iota_f32({2})}, {spec({{"i"}})},
                             {spec({{"i"}})});
              }),
              HasSubstr("IndexError: tuple index out of range (ppermute pair (2, 0) over a group "
                        "of 2, expected indices in -2..1)"));
}

TEST(CollectiveErrors, PsumScatterUntiledNeedsTheShardCount) {
  EXPECT_THAT(
      collective_error([](Context& ctx, const Array& v) { return ctx.psum_scatter(v, "i"); },
                       iota_f32({12})),
      HasSubstr("reduce_scatter operand scatter dimension size 3 must match shard count 4"));
}

TEST(CollectiveErrors, PsumScatterTiledNeedsAMultipleOfTheShardCount) {
  EXPECT_THAT(
      collective_error(
          [](Context& ctx, const Array& v) { return ctx.psum_scatter(v, "i", 0, /*tiled=*/true); },
          iota_f32({24})),
      HasSubstr("tiled reduce_scatter operand scatter dimension size 6 must be divisible "
                "by shard_count 4"));
}

TEST(CollectiveErrors, AllToAllTiledNeedsAMultipleOfTheAxisSize) {
  EXPECT_THAT(
      collective_error(
          [](Context& ctx, const Array& v) { return ctx.all_to_all(v, "i", 0, 0, /*tiled=*/true); },
          iota_f32({24})),
      HasSubstr("The size of all_to_all split_axis (6) has to be divisible by the size of "
                "the named axis 'i' (4)"));
}

TEST(CollectiveErrors, AllToAllUntiledNeedsTheAxisSize) {
  EXPECT_THAT(
      collective_error([](Context& ctx, const Array& v) { return ctx.all_to_all(v, "i", 0, 0); },
                       iota_f32({12})),
      AllOf(HasSubstr("all_to_all requires the size of the mapped axis"),
            HasSubstr("to equal x.shape[split_axis], but they are 4 and 3 respectively.")));
}

TEST(CollectiveErrors, AllGatherAxisOutOfRange) {
  EXPECT_THAT(
      collective_error([](Context& ctx, const Array& v) { return ctx.all_gather(v, "i", 2); },
                       iota_f32({8})),
      AllOf(HasSubstr("all_gather axis = 2"), HasSubstr("out of bounds for rank 2")));
  EXPECT_THAT(
      collective_error(
          [](Context& ctx, const Array& v) { return ctx.all_gather(v, "i", -2, /*tiled=*/true); },
          iota_f32({8})),
      AllOf(HasSubstr("all_gather axis = -2"), HasSubstr("out of bounds for rank 1")));
}

// ---- Deadlocks and device failures

TEST(DeadlockErrors, DevicesThatCallDifferentCollectivesAreReported) {
  const DeviceFunction f = [](Context& ctx, const Values& in) -> Values {
    return {ctx.device() == 0 ? ctx.psum(in[0], "i") : ctx.pmax(in[0], "i")};
  };
  try {
    shard_map_on(Mesh({4}, {"i"}), f, {iota_f32({4})}, {spec({{"i"}})}, {spec({{"i"}})},
                 /*check_vma=*/false);
    FAIL() << "expected a DeadlockError";
  } catch (const DeadlockError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("deadlock"), HasSubstr("collective #0"),
                                HasSubstr("device 0 waits in psum('i') of float32[1]"),
                                HasSubstr("devices 1-3 wait in pmax('i') of float32[1]")));
  }
}

TEST(DeadlockErrors, DevicesThatPassDifferentShapesAreReported) {
  const DeviceFunction f = [](Context& ctx, const Values& in) -> Values {
    return {ctx.psum(slice(in[0], 0, 0, ctx.device() == 2 ? 1 : 2), "i")};
  };
  try {
    shard_map_on(Mesh({4}, {"i"}), f, {iota_f32({8})}, {spec({{"i"}})}, {spec({{"i"}})});
    FAIL() << "expected a DeadlockError";
  } catch (const DeadlockError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("devices disagree at collective #0"),
                                HasSubstr("devices 0-1,3 wait in psum('i') of float32[2]"),
                                HasSubstr("device 2 waits in psum('i') of float32[1]")));
  }
}

TEST(DeadlockErrors, ADeviceThatReturnsEarlyIsReportedNotHung) {
  const DeviceFunction f = [](Context& ctx, const Values& in) -> Values {
    if (ctx.device() == 1) return {in[0]};
    return {ctx.psum(in[0], "i")};
  };
  try {
    shard_map_on(Mesh({4}, {"i"}), f, {iota_f32({4})}, {spec({{"i"}})}, {spec({{"i"}})},
                 /*check_vma=*/false);
    FAIL() << "expected a DeadlockError";
  } catch (const DeadlockError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("no device can proceed"),
                                HasSubstr("device 1 finished after 0 collective(s)"),
                                HasSubstr("devices 0,2-3 wait in psum('i') of float32[1]")));
  }
}

TEST(DeadlockErrors, ADeviceThatThrowsHasItsErrorRethrown) {
  const DeviceFunction f = [](Context& ctx, const Values& in) -> Values {
    if (ctx.device() == 2) throw std::runtime_error("device 2 ran out of patience");
    return {ctx.psum(in[0], "i")};
  };
  try {
    shard_map_on(Mesh({4}, {"i"}), f, {iota_f32({4})}, {spec({{"i"}})}, {spec({{"i"}})});
    FAIL() << "expected the device's error";
  } catch (const DeadlockError& e) {
    FAIL() << "got a DeadlockError instead of the device's error: " << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "device 2 ran out of patience");
  }
}

TEST(DeadlockErrors, TheLowestFailingDeviceWins) {
  // Devices 1 and 3 both fail with a user error after the first psum; device 1's is rethrown.
  const DeviceFunction f = [](Context& ctx, const Values& in) -> Values {
    const Array s = ctx.psum(in[0], "i");
    if (ctx.device() % 2 == 1) {
      return {ctx.psum(s, "bad" + std::to_string(ctx.device()))};
    }
    return {ctx.psum(s, "i")};
  };
  EXPECT_THAT(error_of([&] {
                shard_map_on(Mesh({4}, {"i"}), f, {iota_f32({4})}, {spec({{"i"}})},
                             {spec({{"i"}})});
              }),
              AllOf(HasSubstr("unbound axis name: bad1"), Not(HasSubstr("deadlock"))));
}

}  // namespace
}  // namespace spmd
