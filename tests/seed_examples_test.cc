// The worked examples of the JAX tutorials listed in docs/examples.md, reproduced on the
// reference backend. Suite names start with "seed" so that `ctest -R seed` runs exactly these.
// Each test names the tutorial (by its number there) and quotes the lines it prints. Where a
// tutorial feeds random data (np.random.rand, jax.random.normal), its printed numbers depend on
// that data and are not checked; the tests use arange-like data instead and check what follows
// from it exactly, plus the shapes and identities the tutorials print.

#include "examples/seed_examples.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "cli/examples_command.h"
#include "examples/example_ops.h"
#include "examples/mlp.h"
#include "examples/numpy_str.h"
#include "reference/elementwise.h"
#include "reference/pmap.h"
#include "reference/reference_backend.h"

namespace spmd {
namespace {

std::vector<float> floats(const Array& a) {
  const auto v = a.values<float>();
  return {v.begin(), v.end()};
}

Array f32(Shape shape, const std::vector<float>& values) {
  return Array::from_values<float>(std::move(shape), values);
}

// ---- 001 (Aurora Chapter 1.2: Single-Host Sharding with jax.pmap) -------------------------------

// In [8]: jax.pmap(scale, in_axes=(0, 0), axis_name='i') prints
//   Input sharded_x_data:            [[ 0.  1.  2.  3.] ... [12. 13. 14. 15.]]
//   Input sharded_scale_factors_data: [10. 20. 30. 40.]
//   Pmap result (output from all devices stacked):
//   [[  0.  10.  20.  30.]
//    [ 80. 100. 120. 140.]
//    [240. 270. 300. 330.]
//    [480. 520. 560. 600.]]
//   Result shape: (4, 4) (Should be: num_devices, elements_per_device)
TEST(seed001_aurora, PmapScaleWithInAxes00PrintsTheTutorialsArrays) {
  ReferenceBackend backend;
  const seeds::ScaleExample e = seeds::pmap_scale(backend);
  EXPECT_EQ(numpy_str(e.x),
            "[[ 0.  1.  2.  3.]\n [ 4.  5.  6.  7.]\n [ 8.  9. 10. 11.]\n [12. 13. 14. 15.]]");
  EXPECT_EQ(numpy_str(e.factors), "[10. 20. 30. 40.]");
  EXPECT_EQ(numpy_str(e.result),
            "[[  0.  10.  20.  30.]\n"
            " [ 80. 100. 120. 140.]\n"
            " [240. 270. 300. 330.]\n"
            " [480. 520. 560. 600.]]");
  EXPECT_EQ(floats(e.result), (std::vector<float>{0, 10, 20, 30, 80, 100, 120, 140, 240, 270, 300,
                                                  330, 480, 520, 560, 600}));
  EXPECT_EQ(shape_to_string(e.result.shape()), "(4, 4)");
}

// In [9]: "Global Aurora data shape: (32, 3)", "Shape after direct reshape: (4, 8, 3)".
// In [10] (in_axes=(0, None)): "Replicated param: 5.0", "Result shape: (4, 3)".
// The printed values come from np.random.rand; on arange data, sum(data_shard * 5.0, axis=0)
// over device d's rows 8d..8d+7 is 5 * (sum of those rows).
TEST(seed001_aurora, InAxes0NoneReplicatesTheParameter) {
  ReferenceBackend backend;
  const seeds::InOutAxesExample e = seeds::pmap_in_out_axes(backend);
  EXPECT_EQ(shape_to_string(e.global_data.shape()), "(32, 3)");
  EXPECT_EQ(shape_to_string(e.prepared.shape()), "(4, 8, 3)");
  EXPECT_EQ(numpy_str(e.param), "5.0");
  EXPECT_EQ(shape_to_string(e.per_device_sums.shape()), "(4, 3)");
  for (int d = 0; d < 4; ++d) {
    for (int f = 0; f < 3; ++f) {
      float rows = 0;
      for (int r = 0; r < 8; ++r) rows += static_cast<float>((8 * d + r) * 3 + f);
      EXPECT_EQ(e.per_device_sums.values<float>()[static_cast<std::size_t>(d * 3 + f)], 5 * rows);
    }
  }
}

// In [11]: "Scalar results from each device (stacked by default out_axes=0): ... Shape: (4,)" and
//   Identical result (out_axes=None):
//   42.0
//   Shape: ()
// (000 says the same: "If a replica returns a scalar, pmap will return a 1D array of scalars, one
// for each replica.")
TEST(seed001_aurora, OutAxesStacksScalarsAndNoneReturnsOneCopy) {
  ReferenceBackend backend;
  const seeds::InOutAxesExample e = seeds::pmap_in_out_axes(backend);
  EXPECT_EQ(shape_to_string(e.scalar_sums.shape()), "(4,)");
  EXPECT_EQ(numpy_str(e.identical), "42.0");
  EXPECT_EQ(shape_to_string(e.identical.shape()), "()");
  // Each scalar is the sum of the device's row sums.
  for (int d = 0; d < 4; ++d) {
    const Array row = take(e.per_device_sums, 0, d);
    EXPECT_EQ(e.scalar_sums.values<float>()[static_cast<std::size_t>(d)],
              sum_all(row).values<float>()[0]);
  }
}

// In [17]: with devices=[CpuDevice(id=0), CpuDevice(id=1)] the seed prints
//   Input data shape for subset pmap: (2, 8, 3)
//   [[23.570044 17.356874 21.184027]
//    [18.736385 23.411463 19.134218]]
//   Result shape: (2, 3)
// which are exactly the first two rows In [10] printed for all four devices.
TEST(seed001_aurora, DevicesSubsetGivesTheFirstRowsOfTheFullResult) {
  ReferenceBackend backend;
  const seeds::InOutAxesExample e = seeds::pmap_in_out_axes(backend);
  EXPECT_EQ(shape_to_string(e.subset_result.shape()), "(2, 3)");
  EXPECT_TRUE(e.subset_result.bitwise_equal(slice(e.per_device_sums, 0, 0, 2)));
}

// In [15]: static_broadcasted_argnums=(1,), in_axes=(0, None, None): static 7 takes the
// `x * 100 + r` branch, static 3 the `x * 3 + r` branch; result[:, 0] has one value per device
// ("[65.99184  89.81062  68.202095 53.22373 ]" on random data). With arange data the first
// element of device d is x = 24 d.
TEST(seed001_aurora, StaticArgumentPicksTheBranch) {
  ReferenceBackend backend;
  const seeds::InOutAxesExample axes = seeds::pmap_in_out_axes(backend);
  const seeds::StaticArgExample e = seeds::pmap_static_argument(backend, axes.prepared);
  EXPECT_EQ(floats(e.with_7), (std::vector<float>{0.5f, 2400.5f, 4800.5f, 7200.5f}));
  EXPECT_EQ(floats(e.with_3), (std::vector<float>{0.5f, 72.5f, 144.5f, 216.5f}));
}

// In [18]: psum / pmean / all_gather inside pmap print
//   Model weights (replicated) shape: (3, 2)
//   Shape of 'summed_res' (outer device dim from pmap): (4, 8, 2)
//   summed_res[0] and summed_res[1] are identical: True
//   Shape of 'mean_res': (4,)
//   mean_res[0] and mean_res[1] are identical: True
//   Shape of 'gathered_res': (4, 4, 2)
//   gathered_res[0] and gathered_res[1] are identical: True
TEST(seed001_aurora, CollectivesHaveTheTutorialsShapesAndAgreeAcrossDevices) {
  ReferenceBackend backend;
  const seeds::InOutAxesExample axes = seeds::pmap_in_out_axes(backend);
  const seeds::CollectivesExample e = seeds::pmap_collectives(backend, axes.prepared);
  EXPECT_EQ(shape_to_string(e.weights.shape()), "(3, 2)");
  EXPECT_EQ(shape_to_string(e.summed.shape()), "(4, 8, 2)");
  EXPECT_EQ(shape_to_string(e.mean.shape()), "(4,)");
  EXPECT_EQ(shape_to_string(e.gathered.shape()), "(4, 4, 2)");
  EXPECT_TRUE(replicas_bit_identical(e.summed));
  EXPECT_TRUE(replicas_bit_identical(e.mean));
  EXPECT_TRUE(replicas_bit_identical(e.gathered));
  // gathered_res[i, j, :] is device j's local_output[0, :], and summed_res[0, 0, :] their sum.
  const Array gathered = take(e.gathered, 0, 0);
  EXPECT_TRUE(take(take(e.summed, 0, 0), 0, 0).bitwise_equal(sum_axis(gathered, 0)));
}

// In [18] also prints numbers that determine each other: the gathered first rows
//   [[0.6746523  0.5609971 ]
//    [0.699285   0.61584073]
//    [1.0759616  0.7655081 ]
//    [0.7017747  0.5912713 ]]
// are the four devices' local_output[0, :], and their psum and pmean print as
//   [3.1516733 2.5336175]
//   Value on first device (actual global mean): 0.7879183292388916
// In float32 only the device-order fold ((d0 + d1) + d2) + d3 (XLA:CPU's all-reduce, the
// reference backend's default) gives both sums; a tree fold gives 3.1516736 and 2.5336173.
TEST(seed001_aurora, PsumAndPmeanOfThePrintedRowsGiveThePrintedSumAndMean) {
  ReferenceBackend backend;
  const Array rows = f32({4, 2}, {0.6746523f, 0.5609971f, 0.699285f, 0.61584073f, 1.0759616f,
                                  0.7655081f, 0.7017747f, 0.5912713f});
  const auto reduce = [](Context& ctx, const Values& args) -> Values {
    const std::string axis = "aurora_data_parallel_mesh";
    return {ctx.psum(args[0], axis), ctx.pmean(take(args[0], 0, 0), axis)};
  };
  PmapOptions options;
  options.axis_name = "aurora_data_parallel_mesh";
  const Values out = run_pmap(backend, reduce, options, {rows});
  EXPECT_EQ(numpy_str(take(out[0], 0, 0)), "[3.1516733 2.5336175]");
  EXPECT_EQ(static_cast<double>(out[1].values<float>()[0]), 0.7879183292388916);
  EXPECT_TRUE(replicas_bit_identical(out[0]));
  EXPECT_TRUE(replicas_bit_identical(out[1]));
}

// The arrays 001 prints, from the values it prints: our formatter lays them out as NumPy does.
TEST(seed001_aurora, NumpyFormatterReproducesThePrintedArrays) {
  // In [10]: Result from pmap (raw):
  EXPECT_EQ(numpy_str(f32(
                {4, 3}, {23.570044f, 17.356874f, 21.184027f, 18.736385f, 23.411463f, 19.134218f,
                         18.431837f, 19.805702f, 25.691887f, 17.981094f, 19.538786f, 15.820544f})),
            "[[23.570044 17.356874 21.184027]\n"
            " [18.736385 23.411463 19.134218]\n"
            " [18.431837 19.805702 25.691887]\n"
            " [17.981094 19.538786 15.820544]]");
  // In [11]: Scalar results from each device (stacked by default out_axes=0):
  EXPECT_EQ(numpy_str(f32({4}, {62.110943f, 61.282063f, 63.929436f, 53.340424f})),
            "[62.110943 61.282063 63.929436 53.340424]");
  // In [15]: Result with static_val=7 / static_val=3 (first element from each device):
  EXPECT_EQ(numpy_str(f32({4}, {65.99184f, 89.81062f, 68.202095f, 53.22373f})),
            "[65.99184  89.81062  68.202095 53.22373 ]");
  EXPECT_EQ(numpy_str(f32({4}, {2.464755f, 3.1793187f, 2.5310628f, 2.0817118f})),
            "[2.464755  3.1793187 2.5310628 2.0817118]");
  // In [18]: Example value (all gathered rows as seen by device 0):
  EXPECT_EQ(numpy_str(f32({4, 2}, {0.6746523f, 0.5609971f, 0.699285f, 0.61584073f, 1.0759616f,
                                   0.7655081f, 0.7017747f, 0.5912713f})),
            "[[0.6746523  0.5609971 ]\n"
            " [0.699285   0.61584073]\n"
            " [1.0759616  0.7655081 ]\n"
            " [0.7017747  0.5912713 ]]");
  // In [11]: Identical result (out_axes=None): 42.0
  EXPECT_EQ(numpy_str(Array::scalar(42.0f)), "42.0");
}

// ---- x / psum(x) --------------------------------------------------------------------------------

// Not printed in the tutorials (001 §7 describes psum/pmean without this example): jax.pmap's own
// docstring, `pmap(lambda x: x / jax.lax.psum(x, 'i'), axis_name='i')(jnp.arange(4.))`, prints
// [0.         0.16666667 0.33333334 0.5       ]; the values follow from arange(4.) exactly
// (float32 k / 6, rounded once).
TEST(seed_psum_normalization, XOverPsumXOfArange4) {
  ReferenceBackend backend;
  const seeds::NormalizeExample e = seeds::pmap_normalize(backend);
  EXPECT_EQ(floats(e.normalized), (std::vector<float>{0.0f, 1.0f / 6, 2.0f / 6, 0.5f}));
  EXPECT_EQ(numpy_str(e.normalized), "[0.         0.16666667 0.33333334 0.5       ]");
  EXPECT_EQ(numpy_str(e.mean), "[1.5 1.5 1.5 1.5]");
}

// ---- 002 (14_pmap_basics.ipynb) -----------------------------------------------------------------

// "Basic pmap Usage": pmapped_add(x, y) with x = jnp.arange(n_devices * 4).reshape(n_devices, 4)
// (int32) and y = jnp.ones((n_devices, 4)) (float32); JAX promotes to float32. The notebook
// prints `Result shape: {result.shape}` without its output; with 4 devices it is (4, 4) and the
// values are arange + 1.
TEST(seed002_pmap_basics, SimpleAddOfArangeAndOnes) {
  ReferenceBackend backend;
  const auto simple_add = [](Context&, const Values& args) -> Values {
    return {add(convert(args[0], DType::float32), args[1])};
  };
  const Values out =
      run_pmap(backend, simple_add, PmapOptions{}, {arange_i32({4, 4}), full_f32({4, 4}, 1.0f)});
  EXPECT_EQ(shape_to_string(out[0].shape()), "(4, 4)");
  EXPECT_EQ(out[0].dtype(), DType::float32);
  for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(out[0].values<float>()[i], i + 1.0f);
}

// "Pattern 1: Device-specific computations": x * (device_id + 1) on jnp.ones((n_devices, 10))
// with device_ids = jnp.arange(n_devices) gives row d filled with d + 1; lax.axis_index gives the
// same ids without passing them.
TEST(seed002_pmap_basics, DeviceSpecificComputationAndAxisIndex) {
  ReferenceBackend backend;
  const seeds::AxisIndexExample e = seeds::pmap_axis_index(backend);
  EXPECT_EQ(numpy_str(e.indices), "[0 1 2 3]");
  for (int d = 0; d < 4; ++d) {
    for (int j = 0; j < 10; ++j) {
      EXPECT_EQ(e.passed_ids.values<float>()[static_cast<std::size_t>(d * 10 + j)], d + 1.0f);
    }
  }
  EXPECT_TRUE(e.passed_ids.bitwise_equal(e.from_axis_index));
}

// "Pattern 2: Conditional execution based on device": lead_flags = [i == 0 ...] on
// jnp.ones((n_devices, 10)): jnp.sum(x) * 2 = 20 on device 0, jnp.mean(x) = 1 elsewhere.
TEST(seed002_pmap_basics, ConditionalOnLeadDevice) {
  ReferenceBackend backend;
  EXPECT_EQ(floats(seeds::pmap_conditional(backend)), (std::vector<float>{20, 1, 1, 1}));
}

// "Reduction Operations in pmap": global_count = lax.psum(local_count) is n_devices * 1000 for
// a (n_devices, 1000) input, and global_mean = global_sum / global_count. On arange data
// (instead of jax.random.normal) every sum is an exact float32 integer.
TEST(seed002_pmap_basics, PsumOfLocalSumsAndCounts) {
  ReferenceBackend backend;
  const seeds::ReductionExample e = seeds::pmap_sum_and_mean(backend);
  EXPECT_EQ(floats(e.local_sum), (std::vector<float>{499500, 1499500, 2499500, 3499500}));
  EXPECT_EQ(numpy_str(e.global_count), "[4000 4000 4000 4000]");
  EXPECT_EQ(floats(e.global_sum), (std::vector<float>(4, 7998000)));
  EXPECT_EQ(floats(e.global_mean), (std::vector<float>(4, 1999.5f)));
}

// ---- 003 (Data Parallelism with pmap, Flax NNX) -------------------------------------------------

// "What Happens During pmean":
//   # Device 0: grad = [1.0, 2.0, 3.0]
//   # Device 1: grad = [1.5, 2.5, 3.5]
//   # Device 2: grad = [0.5, 1.5, 2.5]
//   # After pmean: all devices have the same (averaged) gradient
//   # All devices: grad = [1.0, 2.0, 3.0]  # (1.0+1.5+0.5)/3, etc.
TEST(seed003_data_parallel, PmeanAveragesTheThreeGradients) {
  ReferenceBackend backend;
  const Array averaged = seeds::pmap_pmean_gradients(backend);
  EXPECT_EQ(floats(averaged), (std::vector<float>{1, 2, 3, 1, 2, 3, 1, 2, 3}));
}

// ---- 004 (Distributed JAX documentation) --------------------------------------------------------

// "pmap (Parallel Map)": `@jax.pmap def parallel_fn(x): return jax.lax.psum(x, axis_name='i')`.
// pmap binds no axis named 'i' unless given axis_name='i' (000's "The default axis_name is `i`"
// is not so), so JAX raises "unbound axis name: i"; with the name, psum of arange(4.) is 6.
TEST(seed004_distributed_docs, PsumNeedsPmapsAxisName) {
  ReferenceBackend backend;
  const seeds::UnboundAxisExample e = seeds::pmap_psum_axis_name(backend);
  EXPECT_NE(e.error.find("unbound axis name: i"), std::string::npos) << e.error;
  EXPECT_EQ(floats(e.with_axis_name), (std::vector<float>{6, 6, 6, 6}));
}

// "Custom Collectives": jax.lax.ppermute(x, axis_name='devices', perm=[(0, 1), (1, 0)]) swaps
// two devices' values.
TEST(seed004_distributed_docs, PpermuteSwapsTwoDevices) {
  ReferenceBackend backend;
  EXPECT_EQ(floats(seeds::pmap_ppermute_swap(backend)), (std::vector<float>{3, 4, 5, 0, 1, 2}));
}

// "shard_map (Experimental)": Mesh(devices.reshape(2, 4), ('x', 'y')),
// in_specs=PartitionSpec('x', 'y'), x_shard.sum(axis=1) (with out_specs P('x'), as in "Minimize
// Communication"). Each device holds a (2, 2) block; the local sum still varies along 'y', so
// the replication check rejects the out_spec; psum over 'y' gives the row sums.
TEST(seed004_distributed_docs, ShardMapRowSumsNeedPsumOverY) {
  ReferenceBackend backend;
  const seeds::ShardMapExample e = seeds::shard_map_row_sums(backend);
  EXPECT_EQ(numpy_str(e.block_shape), "[2 2]");
  EXPECT_NE(e.error.find("possibly varying over {x, y}"), std::string::npos) << e.error;
  EXPECT_EQ(floats(e.row_sums), (std::vector<float>{28, 92, 156, 220}));
  // check_vma=False reads device (x, y=0)'s partial sums: columns 0 and 1 of each row.
  EXPECT_EQ(floats(e.unchecked), (std::vector<float>{1, 17, 33, 49}));
}

// ---- 000 Part 3 / 003 Step 4: data-parallel training --------------------------------------------

// "Calls jax.lax.pmean on the gradients to average them across devices. Updates parameters ...
// using the averaged gradients": the loss must fall and every replica must stay bit-identical
// (003: "Update parameters (identical on all devices after pmean)").
TEST(seed_data_parallel_training, LossDecreasesAndReplicasStayBitIdentical) {
  ReferenceBackend backend;
  const MlpConfig config;
  const TrainingRun run = train_data_parallel(backend, config);
  ASSERT_EQ(run.steps.size(), static_cast<std::size_t>(config.steps));
  for (std::size_t i = 1; i < run.steps.size(); ++i) {
    EXPECT_LT(run.steps[i].loss, run.steps[i - 1].loss) << "step " << run.steps[i].step;
  }
  EXPECT_LT(run.steps.back().loss, 0.5f * run.steps.front().loss);
  for (const TrainingStep& step : run.steps) {
    EXPECT_TRUE(step.replicas_identical) << "step " << step.step;
  }
}

TEST(seed_data_parallel_training, IsDeterministicAcrossRuns) {
  ReferenceBackend backend;
  const TrainingRun first = train_data_parallel(backend, MlpConfig{});
  const TrainingRun second = train_data_parallel(backend, MlpConfig{});
  ASSERT_EQ(first.steps.size(), second.steps.size());
  for (std::size_t i = 0; i < first.steps.size(); ++i) {
    EXPECT_EQ(first.steps[i].loss, second.steps[i].loss);
  }
  for (int i = 0; i < kMlpLeaves; ++i) EXPECT_TRUE(first.params[i].bitwise_equal(second.params[i]));
}

// pmean of equal-sized shards' mean losses and gradients is the whole batch's (000: "pmean ...
// for gradient aggregation"), up to float32 rounding of the different summation order.
TEST(seed_data_parallel_training, PmeanOfShardGradientsMatchesTheWholeBatch) {
  ReferenceBackend backend;
  const MlpConfig config;
  SplitMix64 rng(config.seed);
  const Values params = init_mlp_params(config, rng);
  const ShardedBatch batch = make_sharded_batch(config, rng);
  const auto averaged_grads = [&](Context& ctx, const Values& args) -> Values {
    return ctx.pmean(mlp_loss_and_grads(params, args[0], args[1]).grads, config.axis_name);
  };
  PmapOptions options;
  options.axis_name = config.axis_name;
  options.out_axes = {std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  const Values sharded = run_pmap(backend, averaged_grads, options, {batch.x, batch.y});
  const std::int64_t total = batch.x.dim(0) * batch.x.dim(1);
  const LossAndGrads whole = mlp_loss_and_grads(params, reshape(batch.x, {total, config.inputs}),
                                                reshape(batch.y, {total, config.outputs}));
  for (int leaf = 0; leaf < kMlpLeaves; ++leaf) {
    const auto a = sharded[leaf].values<float>();
    const auto b = whole.grads[leaf].values<float>();
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6f) << "leaf " << leaf;
  }
}

// ---- spmdsim examples ---------------------------------------------------------------------------

std::string examples_output() {
  std::ostringstream out;
  EXPECT_EQ(run_examples_command(out), 0);
  return out.str();
}

TEST(seed_examples_command, OutputIsIdenticalAcrossRuns) {
  EXPECT_EQ(examples_output(), examples_output());
}

TEST(seed_examples_command, PrintsEverySectionAndTheSeedsLines) {
  const std::string out = examples_output();
  for (const char* header :
       {"=== [001 Aurora 1.2 §1] pmap(scale, in_axes=(0, 0), axis_name='i') on 4 devices",
        "=== [001 Aurora 1.2 §2-3]", "=== [001 Aurora 1.2 §4]", "=== [001 Aurora 1.2 §5]",
        "=== [001 Aurora 1.2 §6]", "=== [001 Aurora 1.2 §7]", "=== [jax.pmap docs / 001 §7]",
        "=== [002 pmap_basics Pattern 1]", "=== [002 pmap_basics]",
        "=== [003 Data Parallelism with pmap]", "=== [004 Distributed JAX docs] psum",
        "=== [004 Distributed JAX docs] shard_map",
        "=== [000 Day 015 / 003 Data Parallelism] data-parallel MLP training"}) {
    EXPECT_NE(out.find(header), std::string::npos) << header;
  }
  // 001 In [8], as the seed prints it.
  EXPECT_NE(out.find("Pmap result (output from all devices stacked):\n"
                     "[[  0.  10.  20.  30.]\n"
                     " [ 80. 100. 120. 140.]\n"
                     " [240. 270. 300. 330.]\n"
                     " [480. 520. 560. 600.]]\n"
                     "Result shape: (4, 4)"),
            std::string::npos);
  EXPECT_NE(out.find("Identical result (out_axes=None):\n42.0\nShape: ()"), std::string::npos);
  EXPECT_NE(out.find("[0.         0.16666667 0.33333334 0.5       ]"), std::string::npos);
  EXPECT_NE(out.find("bit-identical after every step: True"), std::string::npos);
}

}  // namespace
}  // namespace spmd
