// The conformance table of docs/jax-checklist.md (rows #1-#34 that our API expresses) and the
// numeric edge cases E1-E10 there, through pmap / shard_map and the real collectives on the
// reference backend. Each test quotes its row and the row's source. Float results are compared
// bit for bit (std::bit_cast), so -0.0 and NaN are told apart.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "reference/elementwise.h"
#include "reference/pmap.h"
#include "reference/reference_backend.h"
#include "reference/shard_map.h"
#include "tests/programs.h"

namespace spmd {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// ---- Helpers

Array iota_i32(Shape shape) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(element_count(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int32_t>(i);
  return Array::from_values<std::int32_t>(std::move(shape), v);
}

Array iota_f32(Shape shape) { return convert(iota_i32(std::move(shape)), DType::float32); }

template <class T>
std::vector<T> values(const Array& a) {
  auto v = a.values<T>();
  return {v.begin(), v.end()};
}

std::vector<std::uint32_t> float_bits(const Array& a) {
  std::vector<std::uint32_t> bits;
  for (float f : a.values<float>()) bits.push_back(std::bit_cast<std::uint32_t>(f));
  return bits;
}

std::vector<std::uint32_t> bits_of(std::initializer_list<float> floats) {
  std::vector<std::uint32_t> bits;
  for (float f : floats) bits.push_back(std::bit_cast<std::uint32_t>(f));
  return bits;
}

// x / y as jnp.true_divide with x64 off: both to float32, one IEEE division per element (y may be
// a scalar). Division by a traced value is not rewritten by XLA (only division by a constant).
Array true_divide(const Array& x, const Array& y) {
  const Array a = convert(x, DType::float32);
  const Array b = convert(y, DType::float32);
  Array out(DType::float32, a.shape());
  auto o = out.mutable_values<float>();
  for (std::size_t i = 0; i < o.size(); ++i) {
    o[i] = a.values<float>()[i] / b.values<float>()[b.size() == 1 ? 0 : i];
  }
  return out.with_varying_axes(x.varying_axes() | y.varying_axes());
}

Values run_pmap_on(const DeviceFunction& f, const Values& args, PmapOptions options = {}) {
  ReferenceBackend reference;
  if (options.axis_name == PmapOptions{}.axis_name) options.axis_name = "i";
  return run_pmap(reference, f, options, args);
}

// Every device's own outputs (shards), for rows that state per-device values.
std::vector<Values> run_shards(const Mesh& mesh, const DeviceFunction& f, const Values& args,
                               std::vector<std::optional<PartitionSpec>> in_specs) {
  ReferenceBackend reference;
  ShardMapOptions options;
  options.in_specs = std::move(in_specs);
  return reference.run(mesh, split_by_specs(mesh, options, args), f, /*check_vma=*/true);
}

PartitionSpec P() { return PartitionSpec(); }
PartitionSpec P(std::vector<SpecEntry> entries) { return PartitionSpec(std::move(entries)); }

const std::vector<std::int32_t> kSixteen = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 1, 2};

// ---- Conformance table, pmap rows

TEST(ConformanceTable, Row01_PmapPsumOfArange) {
  // #1 [doc psum]: pmap n=4, arange(4), psum(x,'i') -> [6,6,6,6] int32.
  const Values out =
      run_pmap_on([](Context& ctx, const Values& in) -> Values { return {ctx.psum(in[0], "i")}; },
                  {iota_i32({4})});
  EXPECT_EQ(out[0].dtype(), DType::int32);
  EXPECT_THAT(values<std::int32_t>(out[0]), ElementsAre(6, 6, 6, 6));
}

TEST(ConformanceTable, Row02_PmapXOverPsum) {
  // #2 [doc psum]: pmap n=4, arange(4), x/psum(x,'i') -> [0,0.16666667,0.33333334,0.5] f32.
  const Values out = run_pmap_on(
      [](Context& ctx, const Values& in) -> Values {
        return {true_divide(in[0], ctx.psum(in[0], "i"))};
      },
      {iota_i32({4})});
  EXPECT_EQ(float_bits(out[0]), bits_of({0.0f, 0.16666667f, 0.33333334f, 0.5f}));
}

TEST(ConformanceTable, Row03_PmapPsumWithAxisIndexGroups) {
  // #3 [doc psum]: pmap n=4, arange(16).reshape(4,4), psum(x,'i',axis_index_groups=[[0,1],[2,3]])
  // -> rows [4,6,8,10],[4,6,8,10],[20,22,24,26],[20,22,24,26].
  const Values out = run_pmap_on(
      [](Context& ctx, const Values& in) -> Values {
        return {ctx.psum(in[0], "i", AxisIndexGroups{{0, 1}, {2, 3}})};
      },
      {iota_i32({4, 4})});
  EXPECT_THAT(values<std::int32_t>(out[0]),
              ElementsAre(4, 6, 8, 10, 4, 6, 8, 10, 20, 22, 24, 26, 20, 22, 24, 26));
}

TEST(ConformanceTable, Row04_PmapPmeanAndXOverPmean) {
  // #4 [doc pmean]: pmap n=4, arange(4): pmean -> [1.5]*4; x/pmean -> [0,0.6666667,1.3333334,2].
  const Values out = run_pmap_on(
      [](Context& ctx, const Values& in) -> Values {
        const Array mean = ctx.pmean(in[0], "i");
        return {mean, true_divide(in[0], mean)};
      },
      {iota_i32({4})}, {.out_axes = {0, 0}});
  EXPECT_EQ(out[0].dtype(), DType::float32);
  EXPECT_EQ(float_bits(out[0]), bits_of({1.5f, 1.5f, 1.5f, 1.5f}));
  EXPECT_EQ(float_bits(out[1]), bits_of({0.0f, 0.6666667f, 1.3333334f, 2.0f}));
}

TEST(ConformanceTable, Row05_PmapPsumAndPmeanOfBool) {
  // #5 [test testPsumOnBooleanDtype]: pmap n=2, [True,False]: psum -> [1,1] int32;
  // pmean -> [0.5,0.5] f32.
  const Array x = Array::from_values<bool>({2}, {true, false});
  const Values out = run_pmap_on(
      [](Context& ctx, const Values& in) -> Values {
        return {ctx.psum(in[0], "i"), ctx.pmean(in[0], "i")};
      },
      {x}, {.out_axes = {0, 0}});
  EXPECT_EQ(out[0].dtype(), DType::int32);
  EXPECT_THAT(values<std::int32_t>(out[0]), ElementsAre(1, 1));
  EXPECT_EQ(float_bits(out[1]), bits_of({0.5f, 0.5f}));
}

TEST(ConformanceTable, Row06_PmapAllGatherWithAxisIndexGroupsInListedOrder) {
  // #6 [doc all_gather]: pmap n=4, arange(16).reshape(4,4),
  // all_gather(x,'i',axis_index_groups=[[0,2],[3,1]]) -> d0 [x0,x2], d1 [x3,x1], d2 [x0,x2],
  // d3 [x3,x1], shape (4,2,4).
  const Values out = run_pmap_on(
      [](Context& ctx, const Values& in) -> Values {
        return {ctx.all_gather(in[0], "i", 0, false, AxisIndexGroups{{0, 2}, {3, 1}})};
      },
      {iota_i32({4, 4})});
  EXPECT_EQ(out[0].shape(), (Shape{4, 2, 4}));
  const Array x = iota_i32({4, 4});
  const int sources[4][2] = {{0, 2}, {3, 1}, {0, 2}, {3, 1}};
  for (int d = 0; d < 4; ++d) {
    for (int k = 0; k < 2; ++k) {
      EXPECT_TRUE(take(take(out[0], 0, d), 0, k).bitwise_equal(take(x, 0, sources[d][k])))
          << "device " << d << " slot " << k;
    }
  }
}

TEST(ConformanceTable, Row07_PmapPsumScatterUntiledAndTiled) {
  // #7 [doc psum_scatter]: pmap n=4, arange(16).reshape(4,4): psum_scatter(x,'i') ->
  // [24,28,32,36]; tiled=True -> [[24],[28],[32],[36]].
  const Values out = run_pmap_on(
      [](Context& ctx, const Values& in) -> Values {
        return {ctx.psum_scatter(in[0], "i"), ctx.psum_scatter(in[0], "i", 0, /*tiled=*/true)};
      },
      {iota_i32({4, 4})}, {.out_axes = {0, 0}});
  EXPECT_EQ(out[0].shape(), (Shape{4}));
  EXPECT_THAT(values<std::int32_t>(out[0]), ElementsAre(24, 28, 32, 36));
  EXPECT_EQ(out[1].shape(), (Shape{4, 1}));
  EXPECT_THAT(values<std::int32_t>(out[1]), ElementsAre(24, 28, 32, 36));
}

TEST(ConformanceTable, Row08_PmapPsumScatterTiledWithAxisIndexGroups) {
  // #8 [doc psum_scatter]: psum_scatter(x,'i',axis_index_groups=[[0,2],[3,1]],tiled=True) on
  // arange(16).reshape(4,4) -> [[8,10],[20,22],[12,14],[16,18]].
  const Values out = run_pmap_on(
      [](Context& ctx, const Values& in) -> Values {
        return {ctx.psum_scatter(in[0], "i", 0, true, AxisIndexGroups{{0, 2}, {3, 1}})};
      },
      {iota_i32({4, 4})});
  EXPECT_EQ(out[0].shape(), (Shape{4, 2}));
  EXPECT_THAT(values<std::int32_t>(out[0]), ElementsAre(8, 10, 20, 22, 12, 14, 16, 18));
}

TEST(ConformanceTable, Row09_PmapAllGatherNegativeAxis) {
  // #9 [test testGather*NegativeAxis]: pmap n, x (n,4): all_gather(x,'i',axis=-1) -> per device
  // x.T; tiled=True, axis=-1 on (n,4,3) -> x.transpose(1,0,2).reshape(4,-1).
  constexpr int n = 4;
  const Array x = iota_i32({n, 4});
  const Values untiled = run_pmap_on(
      [](Context& ctx, const Values& in) -> Values { return {ctx.all_gather(in[0], "i", -1)}; },
      {x});
  EXPECT_EQ(untiled[0].shape(), (Shape{n, 4, n}));
  for (int d = 0; d < n; ++d) {
    const Array got = take(untiled[0], 0, d);
    for (int a = 0; a < 4; ++a) {
      for (int b = 0; b < n; ++b) {
        EXPECT_EQ(got.values<std::int32_t>()[static_cast<std::size_t>(a * n + b)], b * 4 + a);
      }
    }
  }
  const Array y = iota_i32({n, 4, 3});
  const Values tiled = run_pmap_on(
      [](Context& ctx, const Values& in) -> Values {
        return {ctx.all_gather(in[0], "i", -1, /*tiled=*/true)};
      },
      {y});
  EXPECT_EQ(tiled[0].shape(), (Shape{n, 4, 3 * n}));
  for (int d = 0; d < n; ++d) {
    const Array got = take(tiled[0], 0, d);  // (4, 3n): row a = concat over k of y[k, a, :]
    for (int a = 0; a < 4; ++a) {
      for (int k = 0; k < n; ++k) {
        for (int c = 0; c < 3; ++c) {
          EXPECT_EQ(got.values<std::int32_t>()[static_cast<std::size_t>(a * 3 * n + k * 3 + c)],
                    (k * 4 + a) * 3 + c);
        }
      }
    }
  }
}

TEST(ConformanceTable, Row10_PmapAllToAllWithAxisIndexGroups) {
  // #10 [test testAllToAllReplicaGroups]: pmap n=4, arange(8).reshape(4,2),
  // all_to_all(x,'i',0,0,axis_index_groups=[[0,2],[1,3]]) -> [[0,4],[2,6],[1,5],[3,7]].
  const Values out = run_pmap_on(
      [](Context& ctx, const Values& in) -> Values {
        return {ctx.all_to_all(in[0], "i", 0, 0, false, AxisIndexGroups{{0, 2}, {1, 3}})};
      },
      {iota_i32({4, 2})});
  EXPECT_THAT(values<std::int32_t>(out[0]), ElementsAre(0, 4, 2, 6, 1, 5, 3, 7));
}

TEST(ConformanceTable, Row11_PmapPswapaxesIsSwapaxes0And2) {
  // #11 [test testPswapaxes]: pmap n, x (n,3,n,5), pswapaxes(x,'i',1) -> np.swapaxes(x,0,2).
  constexpr int n = 4;
  const Array x = iota_i32({n, 3, n, 5});
  const Values out = run_pmap_on(
      [](Context& ctx, const Values& in) -> Values { return {ctx.pswapaxes(in[0], "i", 1)}; }, {x});
  ASSERT_EQ(out[0].shape(), (Shape{n, 3, n, 5}));
  const auto got = out[0].values<std::int32_t>();
  const auto in = x.values<std::int32_t>();
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < 3; ++b) {
      for (int c = 0; c < n; ++c) {
        for (int e = 0; e < 5; ++e) {
          EXPECT_EQ(got[static_cast<std::size_t>(((a * 3 + b) * n + c) * 5 + e)],
                    in[static_cast<std::size_t>(((c * 3 + b) * n + a) * 5 + e)]);
        }
      }
    }
  }
}

TEST(ConformanceTable, Row12_PmapPpermuteRing) {
  // #12 [test testCollectivePermute]: pmap n, x (n,4), ppermute(x,'i',[(i,(i+1)%n)]) ->
  // np.roll(x,1,axis=0).
  constexpr int n = 4;
  std::vector<std::pair<int, int>> perm;
  for (int i = 0; i < n; ++i) perm.emplace_back(i, (i + 1) % n);
  const Values out = run_pmap_on(
      [&](Context& ctx, const Values& in) -> Values { return {ctx.ppermute(in[0], "i", perm)}; },
      {iota_i32({n, 4})});
  EXPECT_THAT(values<std::int32_t>(out[0]),
              ElementsAre(12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
}

TEST(ConformanceTable, Row13_PmapPartialPpermuteGivesZerosToNonReceivers) {
  // #13 [doc/src; shape of testCollectivePermuteGrad]: pmap n, arange(n,f32),
  // ppermute(x,'i',[(i,i+1) for i<n-1]) -> [0,0,1,...,n-2] (device 0 gets 0).
  constexpr int n = 5;
  std::vector<std::pair<int, int>> perm;
  for (int i = 0; i < n - 1; ++i) perm.emplace_back(i, i + 1);
  const Values out = run_pmap_on(
      [&](Context& ctx, const Values& in) -> Values { return {ctx.ppermute(in[0], "i", perm)}; },
      {iota_f32({n})});
  EXPECT_EQ(float_bits(out[0]), bits_of({0.0f, 0.0f, 1.0f, 2.0f, 3.0f}));
}

TEST(ConformanceTable, Row14_PmapPshuffleRoll) {
  // #14 [test testPshuffle]: pmap n, arange(n), pshuffle(x,'i',[(i-1)%n]) -> roll(arange(n),1).
  constexpr int n = 4;
  std::vector<int> perm;
  for (int i = 0; i < n; ++i) perm.push_back((i - 1 + n) % n);
  const Values out = run_pmap_on(
      [&](Context& ctx, const Values& in) -> Values { return {ctx.pshuffle(in[0], "i", perm)}; },
      {iota_i32({n})});
  EXPECT_THAT(values<std::int32_t>(out[0]), ElementsAre(3, 0, 1, 2));
}

TEST(ConformanceTable, Row15_PmapPshuffleOfANonPermutationIsAnError) {
  // #15 [test testPshuffleError]: pshuffle(x,'i',[1,1,2,...]) ->
  // ValueError: `perm` does not represent a permutation: [1, 1, 2, ...].
  try {
    run_pmap_on(
        [](Context& ctx, const Values& in) -> Values {
          return {ctx.pshuffle(in[0], "i", {1, 1, 2, 3})};
        },
        {iota_i32({4})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("`perm` does not represent a permutation: [1, 1, 2, 3]"));
  }
}

TEST(ConformanceTable, Row16_PmapAxisIndexAndAxisSize) {
  // #16 [test testAxisIndex / testAxisSize]: pmap n, ones(n,int32): x+axis_index('i') ->
  // 1+arange(n); axis_size('i') -> [n]*n.
  constexpr int n = 4;
  const Array ones = Array::from_values<std::int32_t>({n}, {1, 1, 1, 1});
  const Values out = run_pmap_on(
      [](Context& ctx, const Values& in) -> Values {
        return {add(in[0], ctx.axis_index("i")), Array::scalar<std::int32_t>(ctx.axis_size("i"))};
      },
      {ones}, {.out_axes = {0, 0}});
  EXPECT_THAT(values<std::int32_t>(out[0]), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(values<std::int32_t>(out[1]), ElementsAre(n, n, n, n));
}

TEST(ConformanceTable, Row18_PmapPsumWithUnevenAxisIndexGroups) {
  // #18 [test testPsumUnevenReplicaGroups]: pmap n>2, x (n,4),
  // psum(x,'i',groups=[[0,1],[2..n-1]]) -> per-group sums (uneven groups are OK on CPU).
  constexpr int n = 5;
  const Values out = run_pmap_on(
      [](Context& ctx, const Values& in) -> Values {
        return {ctx.psum(in[0], "i", AxisIndexGroups{{0, 1}, {2, 3, 4}})};
      },
      {iota_i32({n, 4})});
  // Rows 0+1 = [4,6,8,10]; rows 2+3+4 = [8+12+16, ...] = [36,39,42,45].
  EXPECT_THAT(
      values<std::int32_t>(out[0]),
      ElementsAreArray({4, 6, 8, 10, 4, 6, 8, 10, 36, 39, 42, 45, 36, 39, 42, 45, 36, 39, 42, 45}));
}

TEST(ConformanceTable, Row19_PmapPartiallyMappedReturnsTheReplicatedArgument) {
  // #19 [test testPartiallyMapped]: in_axes=(None,0), lambda x,y: x with x = 3. (a scalar, not
  // mapped) and y of shape (n,4) (mapped) -> [3.]*n. (The table's "x (n,4), y scalar" has the
  // two arguments the other way round; the JAX test maps y.)
  constexpr int n = 4;
  const Values out =
      run_pmap_on([](Context&, const Values& in) -> Values { return {in[0]}; },
                  {Array::scalar<float>(3.0f), iota_f32({n, 4})}, {.in_axes = {std::nullopt, 0}});
  EXPECT_EQ(out[0].shape(), (Shape{n}));
  EXPECT_EQ(float_bits(out[0]), bits_of({3.0f, 3.0f, 3.0f, 3.0f}));
}

TEST(ConformanceTable, Row20_PmapInAxesNoneOutAxesNone) {
  // #20 [test test_pmap_array_in_axes_out_axes]: a1 (dc,2), a2 (dc,2), in_axes=(0,None),
  // out_axes=(None,0), f=lambda x,y:(x,y) -> out1 shape (2,), host value a1[0]; out2 shape
  // (dc,dc,2).
  constexpr int dc = 4;
  const Array a1 = iota_f32({dc, 2});
  const Array a2 = add(iota_f32({dc, 2}), Array::scalar<float>(100.0f));
  const Values out = run_pmap_on(
      [](Context&, const Values& in) -> Values {
        return {in[0], in[1]};
      },
      {a1, a2}, {.in_axes = {0, std::nullopt}, .out_axes = {std::nullopt, 0}});
  EXPECT_EQ(out[0].shape(), (Shape{2}));
  EXPECT_TRUE(out[0].bitwise_equal(take(a1, 0, 0)));
  EXPECT_EQ(out[1].shape(), (Shape{dc, dc, 2}));
  for (int d = 0; d < dc; ++d) EXPECT_TRUE(take(out[1], 0, d).bitwise_equal(a2));
}

// ---- Conformance table, shard_map rows

TEST(ConformanceTable, Row22_ShardMapPsumOutSpecNone) {
  // #22 [doc shard_map f1]: 1-D mesh i=4, [3,1,4,1,5,9,2,6,5,3,5,8,9,7,1,2] in P('i'),
  // psum(x,'i'), out P(None) -> [22,20,12,17].
  const Values out =
      shard_map_on(Mesh({4}, {"i"}),
                   [](Context& ctx, const Values& in) -> Values { return {ctx.psum(in[0], "i")}; },
                   {Array::from_values<std::int32_t>({16}, kSixteen)}, {P({{"i"}})}, {P({{}})});
  EXPECT_THAT(values<std::int32_t>(out[0]), ElementsAre(22, 20, 12, 17));
}

TEST(ConformanceTable, Row23_ShardMapPsumOverOneAndTwoAxes) {
  // #23 [doc shard_map f2/f3; values unverified]: mesh (2,2) i,j, arange(16).reshape(4,4) in
  // P('i','j'): psum(x,'i') out P(None,'j') -> [[8,10,12,14],[16,18,20,22]];
  // psum(x,('i','j')) out P(None,None) -> [[20,24],[36,40]].
  const Mesh mesh({2, 2}, {"i", "j"});
  const Values one = shard_map_on(
      mesh, [](Context& ctx, const Values& in) -> Values { return {ctx.psum(in[0], "i")}; },
      {iota_i32({4, 4})}, {P({{"i"}, {"j"}})}, {P({{}, {"j"}})});
  EXPECT_EQ(one[0].shape(), (Shape{2, 4}));
  EXPECT_THAT(values<std::int32_t>(one[0]), ElementsAre(8, 10, 12, 14, 16, 18, 20, 22));
  const Values both = shard_map_on(mesh,
                                   [](Context& ctx, const Values& in) -> Values {
                                     return {ctx.psum(in[0], {"i", "j"})};
                                   },
                                   {iota_i32({4, 4})}, {P({{"i"}, {"j"}})}, {P({{}, {}})});
  EXPECT_EQ(both[0].shape(), (Shape{2, 2}));
  EXPECT_THAT(values<std::int32_t>(both[0]), ElementsAre(20, 24, 36, 40));
}

TEST(ConformanceTable, Row24_ShardMapAllGatherTiledAndUntiled) {
  // #24 [doc shard_map f4/f5]: 1-D mesh 4, [3,9,5,2], all_gather(x,'i',tiled=True), out P('i')
  // -> [3,9,5,2] tiled 4x (16 elements); untiled: shape (16,1).
  const Mesh mesh({4}, {"i"});
  const Array x = Array::from_values<std::int32_t>({4}, {3, 9, 5, 2});
  const std::vector<std::int32_t> four_times = {3, 9, 5, 2, 3, 9, 5, 2, 3, 9, 5, 2, 3, 9, 5, 2};
  const Values tiled = shard_map_on(mesh,
                                    [](Context& ctx, const Values& in) -> Values {
                                      return {ctx.all_gather(in[0], "i", 0, /*tiled=*/true)};
                                    },
                                    {x}, {P({{"i"}})}, {P({{"i"}})});
  EXPECT_EQ(tiled[0].shape(), (Shape{16}));
  EXPECT_EQ(values<std::int32_t>(tiled[0]), four_times);
  const Values untiled = shard_map_on(
      mesh, [](Context& ctx, const Values& in) -> Values { return {ctx.all_gather(in[0], "i")}; },
      {x}, {P({{"i"}})}, {P({{"i"}})});
  EXPECT_EQ(untiled[0].shape(), (Shape{16, 1}));
  EXPECT_EQ(values<std::int32_t>(untiled[0]), four_times);
}

TEST(ConformanceTable, Row25_ShardMapPsumScatterTiled) {
  // #25 [doc shard_map f6]: 1-D mesh 4, the 16-vector of #22, psum_scatter(x,'i',tiled=True),
  // out P('i') -> [22,20,12,17].
  const Values out =
      shard_map_on(Mesh({4}, {"i"}),
                   [](Context& ctx, const Values& in) -> Values {
                     return {ctx.psum_scatter(in[0], "i", 0, /*tiled=*/true)};
                   },
                   {Array::from_values<std::int32_t>({16}, kSixteen)}, {P({{"i"}})}, {P({{"i"}})});
  EXPECT_THAT(values<std::int32_t>(out[0]), ElementsAre(22, 20, 12, 17));
}

TEST(ConformanceTable, Row26_ShardMapPpermuteShift) {
  // #26 [doc shard_map f7; values unverified]: 1-D mesh 4, arange(8),
  // ppermute(x,'i',[(i,(i+1)%4)]), out P('i') -> [6,7,0,1,2,3,4,5].
  const Values out =
      shard_map_on(Mesh({4}, {"i"}),
                   [](Context& ctx, const Values& in) -> Values {
                     return {ctx.ppermute(in[0], "i", {{0, 1}, {1, 2}, {2, 3}, {3, 0}})};
                   },
                   {iota_i32({8})}, {P({{"i"}})}, {P({{"i"}})});
  EXPECT_THAT(values<std::int32_t>(out[0]), ElementsAre(6, 7, 0, 1, 2, 3, 4, 5));
}

TEST(ConformanceTable, Row27_ShardMapAllToAllTiled) {
  // #27 [doc shard_map f9; values unverified]: 1-D mesh 4, the 16-vector of #22,
  // all_to_all(x,'i',0,0,tiled=True) -> [3,5,5,9,1,9,3,7,4,2,5,1,1,6,8,2].
  const Values out =
      shard_map_on(Mesh({4}, {"i"}),
                   [](Context& ctx, const Values& in) -> Values {
                     return {ctx.all_to_all(in[0], "i", 0, 0, /*tiled=*/true)};
                   },
                   {Array::from_values<std::int32_t>({16}, kSixteen)}, {P({{"i"}})}, {P({{"i"}})});
  EXPECT_THAT(values<std::int32_t>(out[0]),
              ElementsAre(3, 5, 5, 9, 1, 9, 3, 7, 4, 2, 5, 1, 1, 6, 8, 2));
}

TEST(ConformanceTable, Row28_ShardMapPminAndPmax) {
  // #28 [test test_pmin / test_pmax]: mesh i=4, arange(8.) in P('i'): pmin -> [0,1];
  // pmax -> [6,7], out P().
  const Values out = shard_map_on(Mesh({4}, {"i"}),
                                  [](Context& ctx, const Values& in) -> Values {
                                    return {ctx.pmin(in[0], "i"), ctx.pmax(in[0], "i")};
                                  },
                                  {iota_f32({8})}, {P({{"i"}})}, {P(), P()});
  EXPECT_EQ(float_bits(out[0]), bits_of({0.0f, 1.0f}));
  EXPECT_EQ(float_bits(out[1]), bits_of({6.0f, 7.0f}));
}

TEST(ConformanceTable, Row29_ShardMapRepeatedPsumOfAnInvariantValue) {
  // #29 [test test_repeated_psum_allowed]: mesh i=4, arange(4.) in P('i'),
  // psum(psum(x,'i'),'i'), out P() -> [24.] (the second psum multiplies by 4).
  const Values out = shard_map_on(Mesh({4}, {"i"}),
                                  [](Context& ctx, const Values& in) -> Values {
                                    return {ctx.psum(ctx.psum(in[0], "i"), "i")};
                                  },
                                  {iota_f32({4})}, {P({{"i"}})}, {P()});
  EXPECT_EQ(float_bits(out[0]), bits_of({24.0f}));
}

TEST(ConformanceTable, Row30_ShardMapAxisIndexOverTwoAxes) {
  // #30 [test test_axis_index_twoaxes]: mesh (4,2) i,j, no inputs; axis_index('i'),
  // axis_index('j'), axis_index(('i','j')) as [None,None], out P('i','j') ->
  // arange(4)[:,None]+0, arange(2)[None,:]+0, arange(8).reshape(4,2).
  const auto as_1x1 = [](const Array& a) { return reshape(a, {1, 1}); };
  const Values out =
      shard_map_on(Mesh({4, 2}, {"i", "j"}),
                   [&](Context& ctx, const Values&) -> Values {
                     return {as_1x1(ctx.axis_index("i")), as_1x1(ctx.axis_index("j")),
                             as_1x1(ctx.axis_index({"i", "j"}))};
                   },
                   {}, {}, {P({{"i"}, {"j"}}), P({{"i"}, {"j"}}), P({{"i"}, {"j"}})});
  EXPECT_THAT(values<std::int32_t>(out[0]), ElementsAre(0, 0, 1, 1, 2, 2, 3, 3));
  EXPECT_THAT(values<std::int32_t>(out[1]), ElementsAre(0, 1, 0, 1, 0, 1, 0, 1));
  EXPECT_THAT(values<std::int32_t>(out[2]), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
}

TEST(ConformanceTable, Row31_ShardMapPpermuteOverTwoAxes) {
  // #31 [test test_collective_permute_with_multiple_axis_names]: mesh (2,2,2) x,y,z,
  // arange(64).reshape(4,16) in P('x',('y','z')): a +1 shift over ('x','y') moves device i's block
  // to (i+2)%8; over ('y','z') to 4*(i//4)+(i+1)%4.
  const Mesh mesh({2, 2, 2}, {"x", "y", "z"});
  const PartitionSpec spec({{"x"}, {"y", "z"}});
  const Array a = iota_i32({4, 16});
  const std::vector<std::pair<int, int>> shift = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  for (const bool over_xy : {true, false}) {
    const AxisNames axes = over_xy ? AxisNames{"x", "y"} : AxisNames{"y", "z"};
    const auto shards = run_shards(mesh,
                                   [&](Context& ctx, const Values& in) -> Values {
                                     return {ctx.ppermute(in[0], axes, shift)};
                                   },
                                   {a}, {spec});
    for (int i = 0; i < 8; ++i) {
      const int to = over_xy ? (i + 2) % 8 : 4 * (i / 4) + (i + 1) % 4;
      EXPECT_TRUE(
          shards[static_cast<std::size_t>(to)][0].bitwise_equal(device_block(a, spec, mesh, i)))
          << (over_xy ? "('x','y')" : "('y','z')") << ": block of device " << i;
    }
  }
}

TEST(ConformanceTable, Row32_ShardMapAllToAllOverTwoAxesTransposes) {
  // #32 [test test_all_to_all]: mesh (4,2) or (8,), arange(64).reshape(8,8) in P(('x','y'),None),
  // all_to_all(a,('x','y'),1,1,tiled=True), out P(None,('x','y')) -> reshape(a.T,(1,64)).
  const Array a = iota_i32({8, 8});
  std::vector<std::int32_t> transposed;
  for (int c = 0; c < 8; ++c) {
    for (int r = 0; r < 8; ++r) transposed.push_back(r * 8 + c);
  }
  for (const Mesh& mesh : {Mesh({4, 2}, {"x", "y"}), Mesh({8}, {"x"})}) {
    const SpecEntry axes = mesh.axis_names();
    const Values out = shard_map_on(mesh,
                                    [&](Context& ctx, const Values& in) -> Values {
                                      return {ctx.all_to_all(in[0], axes, 1, 1, /*tiled=*/true)};
                                    },
                                    {a}, {P({axes, {}})}, {P({{}, axes})});
    EXPECT_EQ(out[0].shape(), (Shape{1, 64})) << mesh.to_string();
    EXPECT_EQ(values<std::int32_t>(out[0]), transposed) << mesh.to_string();
  }
}

TEST(ConformanceTable, Row33_ShardMapAllGatherTiledOverOneAndTwoAxes) {
  // #33 [test test_all_gather]: mesh (2,2,2), a (8,8) in P('z',('x','y')):
  // all_gather(a,'z',axis=0,tiled=True) -> shards (8,2) = column split i at device 2i;
  // all_gather(a,('x','y'),axis=-1,tiled=True) -> shards (4,8) = row half z.
  const Mesh mesh({2, 2, 2}, {"x", "y", "z"});
  const Array a = iota_i32({8, 8});
  const auto shards = run_shards(
      mesh,
      [](Context& ctx, const Values& in) -> Values {
        return {ctx.all_gather(in[0], "z", 0, true), ctx.all_gather(in[0], {"x", "y"}, -1, true)};
      },
      {a}, {PartitionSpec({{"z"}, {"x", "y"}})});
  for (int d = 0; d < 8; ++d) {
    const int column_block = d / 2;  // (x, y) combined; device id = 4x + 2y + z
    const int z = d % 2;
    const Array& by_z = shards[static_cast<std::size_t>(d)][0];
    const Array& by_xy = shards[static_cast<std::size_t>(d)][1];
    EXPECT_EQ(by_z.shape(), (Shape{8, 2}));
    EXPECT_TRUE(by_z.bitwise_equal(slice(a, 1, 2 * column_block, 2 * column_block + 2)));
    EXPECT_EQ(by_xy.shape(), (Shape{4, 8}));
    EXPECT_TRUE(by_xy.bitwise_equal(slice(a, 0, 4 * z, 4 * z + 4)));
  }
}

TEST(ConformanceTable, Row34_ShardMapPsumScatterWithAxisIndexGroups) {
  // #34 [test test_reduce_scatter_with_axis_index_groups]: mesh (2,2,2), a (8,8) in
  // P(None,('x','y','z')), psum_scatter(a,('x','y','z'),0,groups=((0,2,4,6),(1,3,5,7)),tiled=True)
  // -> even / odd column sums split into 4 row-chunks.
  const Mesh mesh({2, 2, 2}, {"x", "y", "z"});
  const Array a = iota_i32({8, 8});
  const auto shards =
      run_shards(mesh,
                 [](Context& ctx, const Values& in) -> Values {
                   return {ctx.psum_scatter(in[0], {"x", "y", "z"}, 0, true,
                                            AxisIndexGroups{{0, 2, 4, 6}, {1, 3, 5, 7}})};
                 },
                 {a}, {PartitionSpec({{}, {"x", "y", "z"}})});
  for (int d = 0; d < 8; ++d) {
    const int parity = d % 2;  // group
    const int rank = d / 2;    // position in its listed group
    std::vector<std::int32_t> expected;
    for (int row = 2 * rank; row < 2 * rank + 2; ++row) {
      std::int32_t sum = 0;
      for (int col = parity; col < 8; col += 2) sum += row * 8 + col;
      expected.push_back(sum);
    }
    const Array& got = shards[static_cast<std::size_t>(d)][0];
    EXPECT_EQ(got.shape(), (Shape{2, 1})) << "device " << d;
    EXPECT_EQ(values<std::int32_t>(got), expected) << "device " << d;
  }
}

// ---- Numeric edge cases E1-E10 (docs/jax-checklist.md#numeric-edge-cases)

// Runs `f` on a 1-D mesh of contributions.size() devices, device r holding contributions[r].
template <class T>
Array reduce_on_mesh(const std::vector<T>& contributions,
                     const std::function<Array(Context&, const Array&)>& f) {
  const auto n = static_cast<std::int64_t>(contributions.size());
  const Values out =
      shard_map_on(Mesh({static_cast<int>(n)}, {"i"}),
                   [&](Context& ctx, const Values& in) -> Values { return {f(ctx, in[0])}; },
                   {Array::from_values<T>({n}, contributions)}, {P({{"i"}})}, {P({{"i"}})});
  return out[0];
}

Array psum_i(Context& ctx, const Array& x) { return ctx.psum(x, "i"); }

TEST(NumericEdgeCases, E1_Float32PsumFoldsInRankOrderFromZero) {
  // E1: mesh 4, f32 [1e8, 1, -1e8, 1], psum -> 1.0 (the exact sum is 2).
  const Array out = reduce_on_mesh<float>({1e8f, 1.0f, -1e8f, 1.0f}, psum_i);
  EXPECT_EQ(float_bits(out), bits_of({1.0f, 1.0f, 1.0f, 1.0f}));
}

TEST(NumericEdgeCases, E2_PsumOfNegativeZerosIsPositiveZero) {
  // E2: mesh 2, f32 [-0.0, -0.0], psum -> +0.0 (the accumulator starts at +0.0).
  const Array out = reduce_on_mesh<float>({-0.0f, -0.0f}, psum_i);
  EXPECT_EQ(float_bits(out), bits_of({+0.0f, +0.0f}));
  // A program on one device skips the all-reduce: -0.0 stays.
  EXPECT_EQ(float_bits(reduce_on_mesh<float>({-0.0f}, psum_i)), bits_of({-0.0f}));
}

TEST(NumericEdgeCases, E3_Bfloat16PsumAccumulatesInFloat32) {
  // E3: mesh 3, bf16 [1, 2^-8, 2^-8], psum -> 1.0078125 (per-step bf16 rounding would give 1.0).
  const Array out = reduce_on_mesh<BFloat16>(
      {BFloat16::from_float(1.0f), BFloat16::from_float(0x1p-8f), BFloat16::from_float(0x1p-8f)},
      psum_i);
  for (BFloat16 v : out.values<BFloat16>()) {
    EXPECT_EQ(v.bits, BFloat16::from_float(1.0078125f).bits);
    EXPECT_EQ(v.to_float(), 1.0078125f);
  }
}

TEST(NumericEdgeCases, E4_Float16PsumRoundsEveryStep) {
  // E4: mesh 3, f16 [1, 2^-11, 2^-11], psum -> 1.0 (f32 accumulation would give 1.0009765625).
  const Array out = reduce_on_mesh<Float16>(
      {Float16::from_float(1.0f), Float16::from_float(0x1p-11f), Float16::from_float(0x1p-11f)},
      psum_i);
  for (Float16 v : out.values<Float16>()) EXPECT_EQ(v.bits, Float16::from_float(1.0f).bits);
}

TEST(NumericEdgeCases, E5_Int8PsumWrapsAround) {
  // E5: mesh 2, int8 [100, 100], psum -> -56 (int8).
  const Array out = reduce_on_mesh<std::int8_t>({100, 100}, psum_i);
  EXPECT_EQ(out.dtype(), DType::int8);
  EXPECT_THAT(values<std::int8_t>(out), ElementsAre(-56, -56));
}

TEST(NumericEdgeCases, E6_PmeanMultipliesByTheRoundedReciprocal) {
  // E6: mesh 3, f32 with psum = 5, pmean (jit) -> 1.6666667461395264 (x * fl(1/3)); true
  // division would give 1.6666666269302368.
  const Array out = reduce_on_mesh<float>(
      {1.0f, 2.0f, 2.0f}, [](Context& ctx, const Array& x) { return ctx.pmean(x, "i"); });
  const float expected = static_cast<float>(1.6666667461395264);
  EXPECT_EQ(float_bits(out), bits_of({expected, expected, expected}));
  EXPECT_NE(std::bit_cast<std::uint32_t>(expected),
            std::bit_cast<std::uint32_t>(static_cast<float>(1.6666666269302368)));
}

TEST(NumericEdgeCases, E7_PmaxAndPminDropNaN) {
  // E7: mesh 2, f32 [NaN, 1.0]: pmax / pmin -> 1.0 / 1.0; all-NaN gives -inf / +inf.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const auto pmax = [](Context& ctx, const Array& x) { return ctx.pmax(x, "i"); };
  const auto pmin = [](Context& ctx, const Array& x) { return ctx.pmin(x, "i"); };
  EXPECT_EQ(float_bits(reduce_on_mesh<float>({nan, 1.0f}, pmax)), bits_of({1.0f, 1.0f}));
  EXPECT_EQ(float_bits(reduce_on_mesh<float>({nan, 1.0f}, pmin)), bits_of({1.0f, 1.0f}));
  EXPECT_EQ(float_bits(reduce_on_mesh<float>({nan, nan}, pmax)), bits_of({-inf, -inf}));
  EXPECT_EQ(float_bits(reduce_on_mesh<float>({nan, nan}, pmin)), bits_of({inf, inf}));
}

TEST(NumericEdgeCases, E8_BoolPmaxIsOrAndPminIsAnd) {
  // E8: mesh 4, bool [T,F,F,F]: pmax -> [T]*4; pmin -> [F]*4.
  const std::vector<bool> x = {true, false, false, false};
  const Array max =
      reduce_on_mesh<bool>(x, [](Context& ctx, const Array& v) { return ctx.pmax(v, "i"); });
  const Array min =
      reduce_on_mesh<bool>(x, [](Context& ctx, const Array& v) { return ctx.pmin(v, "i"); });
  EXPECT_EQ(max.dtype(), DType::bool_);
  EXPECT_THAT(values<bool>(max), ElementsAre(true, true, true, true));
  EXPECT_THAT(values<bool>(min), ElementsAre(false, false, false, false));
}

TEST(NumericEdgeCases, E9_NegativePpermuteIndicesCountFromTheEnd) {
  // E9: mesh 4, ppermute(x,'i',[(0,-1)]) -> device 3 gets x0, the others get zeros.
  const Array out =
      reduce_on_mesh<float>({5.0f, 6.0f, 7.0f, 8.0f}, [](Context& ctx, const Array& x) {
        return ctx.ppermute(x, "i", {{0, -1}});
      });
  EXPECT_EQ(float_bits(out), bits_of({0.0f, 0.0f, 0.0f, 5.0f}));
}

TEST(NumericEdgeCases, E10_AllGatherOrderFollowsTheListedAxisOrder) {
  // E10: mesh (2,2) x,y, v = the value on the device at (x,y): all_gather(v,('y','x')) ->
  // device order 0,2,1,3; with ('x','y'): 0,1,2,3.
  const Mesh mesh({2, 2}, {"x", "y"});
  const Array v = Array::from_values<std::int32_t>({4}, {10, 11, 12, 13});  // device d holds 10+d
  const PartitionSpec by_device(std::vector<SpecEntry>{{"x", "y"}});
  const auto shards = run_shards(mesh,
                                 [](Context& ctx, const Values& in) -> Values {
                                   return {ctx.all_gather(in[0], {"y", "x"}, 0, true),
                                           ctx.all_gather(in[0], {"x", "y"}, 0, true)};
                                 },
                                 {v}, {by_device});
  for (const Values& device : shards) {
    EXPECT_THAT(values<std::int32_t>(device[0]), ElementsAre(10, 12, 11, 13));
    EXPECT_THAT(values<std::int32_t>(device[1]), ElementsAre(10, 11, 12, 13));
  }
}

// ---- Found by running JAX 0.10.2 on CPU (backends/jax; docs/jax-differences.md) ------------

TEST(FoundByRunningJax, Bfloat16PmeanMultipliesByAFloat32ReciprocalAndRoundsOnce) {
  // Generated case jax_0039 (seed 5): pmap n=3, bf16 bits [0x41ac, 0x37a8, 0xbb07] (21.5, ~2e-5,
  // ~-0.00206); JAX gives 0x40e5 (7.15625). A bfloat16 reciprocal would give 7.1875.
  std::vector<BFloat16> inputs;
  for (std::uint16_t bits : {0x41ac, 0x37a8, 0xbb07}) inputs.push_back(BFloat16{bits});
  const Array out = reduce_on_mesh<BFloat16>(
      inputs, [](Context& ctx, const Array& x) { return ctx.pmean(x, "i"); });
  for (BFloat16 v : out.values<BFloat16>()) EXPECT_EQ(v.bits, 0x40e5);
}

TEST(FoundByRunningJax, PsumOverAxesTheInputVariesOverOnlyInPartIsAnErrorUnderCheckVma) {
  // JAX 0.10.2 and 0.12: shard_map(check_vma=True) over mesh (2,2) ('x','y'), input P('x'):
  // psum(x, ('x','y')) raises "jax.lax.psum can only accept axis_name which corresponds to one
  // of varying, unreduced, reduced or invarying state of the input". pmax is accepted by 0.10.2
  // only (JaxVersions.PmaxAndPminOfAPartlyVaryingValueAreAnErrorIn012UnderCheckVma).
  const Mesh mesh({2, 2}, {"x", "y"});
  auto run = [&](const std::function<Array(Context&, const Array&)>& f) {
    return shard_map_on(mesh,
                        [&](Context& ctx, const Values& in) -> Values { return {f(ctx, in[0])}; },
                        {iota_i32({4})}, {P({{"x"}})}, {P({{"x", "y"}})});
  };
  try {
    run([](Context& ctx, const Array& x) { return ctx.psum(x, {"x", "y"}); });
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("jax.lax.psum can only accept axis_name which corresponds"));
    EXPECT_THAT(e.what(), HasSubstr("int32[2]{V:x}, axes: ('x', 'y')"));
  }
}

// The rules below are JAX 0.10.2 / XLA:CPU behaviour shown by backends/jax/show_rules.py and the
// rule cases of backends/jax/generate_cases.py (--rules); docs/jax-differences.md has each.

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<std::uint16_t> bf16_bits(const Array& a) {
  std::vector<std::uint16_t> out;
  for (BFloat16 v : a.values<BFloat16>()) out.push_back(v.bits);
  return out;
}

TEST(FoundByRunningJax, PpermuteIndicesAreLookedUpAsPythonListIndices) {
  // ppermute over 4 devices: (-1, 0) sends device 3's value to device 0; (1, 4) raises
  // IndexError: tuple index out of range (JAX 0.12; 0.10.2 says list).
  const DeviceFunction f = [](Context& ctx, const Values& in) -> Values {
    return {ctx.ppermute(in[0], "i", {{-1, 0}})};
  };
  const Values out = shard_map_on(Mesh({4}, {"i"}), f, {iota_f32({4})}, {P({{"i"}})}, {P({{"i"}})});
  EXPECT_EQ(float_bits(out[0]), bits_of({3.0f, 0.0f, 0.0f, 0.0f}));
  const DeviceFunction out_of_range = [](Context& ctx, const Values& in) -> Values {
    return {ctx.ppermute(in[0], "i", {{1, 4}})};
  };
  EXPECT_THAT(error_of([&] {
                shard_map_on(Mesh({4}, {"i"}), out_of_range, {iota_f32({4})}, {P({{"i"}})},
                             {P({{"i"}})});
              }),
              HasSubstr("IndexError: tuple index out of range"));
}

TEST(FoundByRunningJax, PsumScatterOfBoolIsATypeErrorWhilePmaxAndPminOfBoolWork) {
  const Array flags = Array::from_values<bool>({2, 2}, {true, false, false, false});
  const auto run = [&](const std::function<Array(Context&, const Array&)>& f) {
    return shard_map_on(Mesh({2}, {"i"}),
                        [&](Context& ctx, const Values& in) -> Values { return {f(ctx, in[0])}; },
                        {flags}, {P({{"i"}})}, {P({{"i"}})});
  };
  EXPECT_THAT(error_of([&] {
                run([](Context& ctx, const Array& x) { return ctx.psum_scatter(x, "i", 1); });
              }),
              HasSubstr("TypeError: add does not accept dtype bool"));
  const Values any = run([](Context& ctx, const Array& x) { return ctx.pmax(x, "i"); });
  EXPECT_THAT(values<bool>(any[0]), ElementsAre(true, false, true, false));
  const Values all = run([](Context& ctx, const Array& x) { return ctx.pmin(x, "i"); });
  EXPECT_THAT(values<bool>(all[0]), ElementsAre(false, false, false, false));
}

TEST(FoundByRunningJax, XlaCpuFlushesFloat32AndBfloat16SubnormalsButNotFloat16Ones) {
  const float tiny = std::numeric_limits<float>::denorm_min();  // 1e-45, bits 0x1
  EXPECT_EQ(float_bits(reduce_on_mesh<float>({tiny, tiny}, psum_i)), bits_of({0.0f, 0.0f}));
  EXPECT_EQ(float_bits(reduce_on_mesh<float>(
                {tiny, tiny}, [](Context& ctx, const Array& x) { return ctx.pmax(x, "i"); })),
            bits_of({0.0f, 0.0f}));
  // Element-wise arithmetic in the device function flushes as well; neg and data movement do not.
  const Array flushed = reduce_on_mesh<float>({tiny, tiny}, [](Context& ctx, const Array& x) {
    return add(x, x, ctx.numerics());
  });
  EXPECT_EQ(float_bits(flushed), bits_of({0.0f, 0.0f}));
  EXPECT_EQ(float_bits(reduce_on_mesh<float>({tiny, tiny}, [](Context&, const Array& x) {
              return neg(x);
            })),
            bits_of({-tiny, -tiny}));
  const Array bf16 = reduce_on_mesh<BFloat16>({BFloat16{0x0001}, BFloat16{0x0001}}, psum_i);
  EXPECT_THAT(bf16_bits(bf16), ElementsAre(0x0000, 0x0000));
  const Array f16 = reduce_on_mesh<Float16>({Float16{0x0001}, Float16{0x0001}}, psum_i);
  for (Float16 v : f16.values<Float16>()) EXPECT_EQ(v.bits, 0x0002);
  // The GPU, Gloo and Open MPI orders keep IEEE underflow.
  ReferenceBackend nccl(ReductionOrder{.algorithm = ReductionAlgorithm::nccl_ring});
  const Values kept = run_shard_map(
      nccl, Mesh({2}, {"i"}), [](Context& ctx, const Values& in) -> Values {
        return {ctx.psum(in[0], "i")};
      },
      {.in_specs = {P({{"i"}})}, .out_specs = {P({{"i"}})}},
      {Array::from_values<float>({2}, {tiny, tiny})});
  EXPECT_EQ(float_bits(kept[0]), bits_of({2 * tiny, 2 * tiny}));
}

TEST(FoundByRunningJax, GroupsOfOneFoldFromTheIdentityButOneDeviceProgramsSkipTheReduction) {
  // pmap over 4 devices, axis_index_groups [[0], [1], [2], [3]]: psum of -0.0 is +0.0, pmax of
  // NaN is -inf (max drops NaN), pmax of -0.0 stays -0.0.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const AxisIndexGroups singletons = {{0}, {1}, {2}, {3}};
  const Array x = Array::from_values<float>({4}, {-0.0f, nan, -0.0f, 1.0f});
  const auto run = [&](const std::function<Array(Context&, const Array&)>& f) {
    return shard_map_on(Mesh({4}, {"i"}),
                        [&](Context& ctx, const Values& in) -> Values { return {f(ctx, in[0])}; },
                        {x}, {P({{"i"}})}, {P({{"i"}})}, /*check_vma=*/false)[0];
  };
  EXPECT_EQ(float_bits(run([&](Context& ctx, const Array& v) {
              return ctx.psum(v, "i", singletons);
            })),
            bits_of({0.0f, nan, 0.0f, 1.0f}));
  EXPECT_EQ(float_bits(run([&](Context& ctx, const Array& v) {
              return ctx.pmax(v, "i", singletons);
            })),
            bits_of({-0.0f, -inf, -0.0f, 1.0f}));
  // A program on one device: psum keeps -0.0; psum_scatter still folds.
  EXPECT_EQ(float_bits(reduce_on_mesh<float>({-0.0f}, psum_i)), bits_of({-0.0f}));
  EXPECT_EQ(float_bits(reduce_on_mesh<float>({-0.0f}, [](Context& ctx, const Array& v) {
              return ctx.psum_scatter(v, "i", 0, /*tiled=*/true);
            })),
            bits_of({0.0f}));
}

TEST(FoundByRunningJax, Bfloat16AddFeedsPsumAndConvertToFloat32ItsUnroundedFloat32Value) {
  // pmap over 3 devices, bf16 x = [1, 1, -1], y = [2^-8, 2^-8, 0]: x + y rounds to [1, 1, -1]
  // (1 + 2^-8 is a tie), but psum(x + y) is 0x3f81 (1.0078125, the float32 sum 2.0078125 - 1
  // rounded once), convert(x + y, float32) is 1.00390625, and psum(-(x + y)) is -1: neg keeps
  // the rounding.
  const auto bf16 = [](std::initializer_list<float> values) {
    std::vector<BFloat16> out;
    for (float v : values) out.push_back(BFloat16::from_float(v));
    return Array::from_values<BFloat16>({static_cast<std::int64_t>(out.size())}, out);
  };
  const Array x = bf16({1.0f, 1.0f, -1.0f});
  const Array y = bf16({0x1p-8f, 0x1p-8f, 0.0f});
  const Values out = shard_map_on(
      Mesh({3}, {"i"}),
      [](Context& ctx, const Values& in) -> Values {
        const Array sum = add(in[0], in[1], ctx.numerics());
        return {sum, ctx.psum(sum, "i"), convert(sum, DType::float32),
                ctx.psum(neg(sum), "i")};
      },
      {x, y}, {P({{"i"}}), P({{"i"}})}, {P({{"i"}}), P({{"i"}}), P({{"i"}}), P({{"i"}})});
  EXPECT_THAT(bf16_bits(out[0]), ElementsAre(0x3f80, 0x3f80, 0xbf80));
  EXPECT_THAT(bf16_bits(out[1]), ElementsAre(0x3f81, 0x3f81, 0x3f81));
  EXPECT_EQ(float_bits(out[2]), bits_of({1.00390625f, 1.00390625f, -1.0f}));
  EXPECT_THAT(bf16_bits(out[3]), ElementsAre(0xbf80, 0xbf80, 0xbf80));
}

TEST(FoundByRunningJax, PmaxAndPminDropNaNInTreeOrdersToo) {
  // XLA's max drops NaN; the reference keeps that in every order, a tree whose two leaves are
  // NaN included (they give the identity).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ReferenceBackend tree(ReductionOrder{.algorithm = ReductionAlgorithm::double_binary_tree});
  const Values out = run_shard_map(
      tree, Mesh({4}, {"i"}),
      [](Context& ctx, const Values& in) -> Values {
        return {ctx.pmax(in[0], "i"), ctx.pmin(in[0], "i")};
      },
      {.in_specs = {P({{"i"}})}, .out_specs = {P({{"i"}}), P({{"i"}})}},
      {Array::from_values<float>({4}, {nan, nan, 2.0f, -3.0f})});
  EXPECT_EQ(float_bits(out[0]), bits_of({2.0f, 2.0f, 2.0f, 2.0f}));
  EXPECT_EQ(float_bits(out[1]), bits_of({-3.0f, -3.0f, -3.0f, -3.0f}));
}

// ---- JAX 0.12 against 0.10 (docs/jax-differences.md, "JAX 0.12"): ShardMapOptions::jax_version

Values shard_map_as(JaxVersion version, const Mesh& mesh, const DeviceFunction& f,
                    const Values& args, std::vector<std::optional<PartitionSpec>> in_specs,
                    std::vector<PartitionSpec> out_specs) {
  ReferenceBackend reference;
  ShardMapOptions options;
  options.in_specs = std::move(in_specs);
  options.out_specs = std::move(out_specs);
  options.jax_version = version;
  return run_shard_map(reference, mesh, f, options, args);
}

DeviceFunction ring_ppermute(AxisNames axes) {
  return [axes](Context& ctx, const Values& in) -> Values {
    return {ctx.ppermute(in[0], axes, {{0, 1}, {1, 2}, {2, 3}, {3, 0}})};
  };
}

TEST(JaxVersions, PpermuteOverNamesOutOfMeshOrderIsAnErrorIn012AndMeshOrderIn010) {
  const Mesh mesh({2, 2}, {"x", "y"});
  const PartitionSpec both = P({{"x", "y"}});
  const Values x = {iota_f32({8})};
  const DeviceFunction reversed = ring_ppermute(AxisNames{"y", "x"});
  EXPECT_THAT(error_of([&] {
                shard_map_as(JaxVersion::v0_12, mesh, reversed, x, {both}, {both});
              }),
              HasSubstr("RuntimeError: Make sure that the axis_name passed to jax.lax.ppermute is "
                        "in the same order as the axis_names declared on the mesh."));
  const DeviceFunction shuffle = [](Context& ctx, const Values& in) -> Values {
    return {ctx.pshuffle(in[0], AxisNames{"y", "x"}, {1, 2, 3, 0})};
  };
  EXPECT_THAT(error_of([&] { shard_map_as(JaxVersion::v0_12, mesh, shuffle, x, {both}, {both}); }),
              HasSubstr("RuntimeError: Make sure that the axis_name passed to jax.lax.ppermute"));
  // 0.10 indexes the group in mesh order: the same as naming ('x', 'y').
  const Values as_010 = shard_map_as(JaxVersion::v0_10, mesh, reversed, x, {both}, {both});
  const Values in_mesh_order = shard_map_as(JaxVersion::v0_12, mesh,
                                            ring_ppermute(AxisNames{"x", "y"}), x, {both}, {both});
  EXPECT_EQ(float_bits(as_010[0]), bits_of({6, 7, 0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(float_bits(in_mesh_order[0]), float_bits(as_010[0]));
}

TEST(JaxVersions, PpermuteOverNamesOutOfMeshOrderRunsIn012WhereNoGroupChanges) {
  // 'x' has size 1: every group in ('y', 'x') order is already in ascending device order.
  const Mesh mesh({1, 4}, {"x", "y"});
  const PartitionSpec both = P({{"x", "y"}});
  const Values out = shard_map_as(JaxVersion::v0_12, mesh, ring_ppermute(AxisNames{"y", "x"}),
                                  {iota_f32({4})}, {both}, {both});
  EXPECT_EQ(float_bits(out[0]), bits_of({3, 0, 1, 2}));
}

TEST(JaxVersions, PmaxAndPminOfAPartlyVaryingValueAreAnErrorIn012UnderCheckVma) {
  const Mesh mesh({2, 2}, {"x", "y"});
  for (const CollectiveOp op : {CollectiveOp::pmax, CollectiveOp::pmin}) {
    const DeviceFunction f = [op](Context& ctx, const Values& in) -> Values {
      return {op == CollectiveOp::pmax ? ctx.pmax(in[0], AxisNames{"x", "y"})
                                       : ctx.pmin(in[0], AxisNames{"x", "y"})};
    };
    const std::string name(collective_op_name(op));
    EXPECT_THAT(error_of([&] {
                  shard_map_as(JaxVersion::v0_12, mesh, f, {iota_f32({4})}, {P({{"x"}})}, {P()});
                }),
                HasSubstr("jax.lax." + name +
                          " can only accept axis_name which corresponds to one of varying, "
                          "unreduced, reduced or invarying state of the input. Got input type: "
                          "float32[2]{V:x}, axes: ('x', 'y')"))
        << name;
    const Values out =
        shard_map_as(JaxVersion::v0_10, mesh, f, {iota_f32({4})}, {P({{"x"}})}, {P()});
    EXPECT_EQ(float_bits(out[0]),
              op == CollectiveOp::pmax ? bits_of({2, 3}) : bits_of({0, 1}))
        << name;
  }
}

TEST(JaxVersions, NegativeScatterAndAllToAllAxesCountFromTheEndIn012AndFailIn010) {
  const Mesh mesh({4}, {"x"});
  const Values x = {iota_f32({8, 4})};
  const auto scatter = [](int dimension) -> DeviceFunction {
    return [dimension](Context& ctx, const Values& in) -> Values {
      return {ctx.psum_scatter(in[0], "x", dimension, /*tiled=*/true)};
    };
  };
  const auto all_to_all = [](int split, int concat) -> DeviceFunction {
    return [split, concat](Context& ctx, const Values& in) -> Values {
      return {ctx.all_to_all(in[0], "x", split, concat, /*tiled=*/true)};
    };
  };
  const PartitionSpec rows = P({{"x"}});
  const PartitionSpec columns = P({{}, {"x"}});
  EXPECT_EQ(float_bits(shard_map_as(JaxVersion::v0_12, mesh, scatter(-1), x, {rows}, {columns})[0]),
            float_bits(shard_map_as(JaxVersion::v0_12, mesh, scatter(1), x, {rows}, {columns})[0]));
  EXPECT_EQ(
      float_bits(shard_map_as(JaxVersion::v0_12, mesh, all_to_all(-1, -2), x, {rows}, {rows})[0]),
      float_bits(shard_map_as(JaxVersion::v0_12, mesh, all_to_all(1, 0), x, {rows}, {rows})[0]));
  EXPECT_THAT(error_of([&] {
                shard_map_as(JaxVersion::v0_10, mesh, scatter(-1), x, {rows}, {columns});
              }),
              HasSubstr("psum_scatter scatter_dimension = -1: ValueError: Cannot lower jaxpr"));
  EXPECT_THAT(error_of([&] {
                shard_map_as(JaxVersion::v0_10, mesh, all_to_all(1, -2), x, {rows}, {rows});
              }),
              HasSubstr("all_to_all concat_axis = -2: JAX 0.10.2 ends with a segmentation fault"));
}

}  // namespace
}  // namespace spmd
