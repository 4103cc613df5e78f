// The CUDA schedule executor against the CPU: for every algorithm of collectives/, every
// collective kind, float32 / float16 / bfloat16 / int32, 2-8 virtual devices and element counts
// that do and do not divide evenly (up to over 1 Mi), the GPU's bits equal
// collectives::run_schedule_data's, and an all-reduce's equal the reference folding in the
// algorithm's order (reference/fold_reduce.h); under XLA:CPU's numerics, on data around the
// smallest normal, the GPU flushes subnormals as the CPU does. GPU tests skip, naming what is
// missing, when no CUDA device can be used.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cuda/cuda_device.h"
#include "backends/cuda/near_subnormal_test_data.h"
#include "backends/cuda/schedule_on_gpu.h"
#include "backends/sim_backend.h"
#include "collectives/algorithm.h"
#include "collectives/schedule_data.h"
#include "reference/array_difference.h"
#include "reference/fold_reduce.h"
#include "tests/generators.h"

namespace spmd::cuda {
namespace {

using collectives::Algorithm;
using collectives::CollectiveKind;
using collectives::CollectiveShape;

constexpr Algorithm kAlgorithms[] = {Algorithm::direct,
                                     Algorithm::ring,
                                     Algorithm::bidirectional_ring,
                                     Algorithm::halving_doubling,
                                     Algorithm::binary_tree,
                                     Algorithm::double_binary_tree,
                                     Algorithm::torus,
                                     Algorithm::bidirectional_torus};
constexpr CollectiveKind kKinds[] = {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter,
                                     CollectiveKind::all_gather, CollectiveKind::all_to_all,
                                     CollectiveKind::permute,    CollectiveKind::broadcast};
constexpr DType kDTypes[] = {DType::float32, DType::float16, DType::bfloat16, DType::int32};

// The grid the torus algorithms run on: the most square a x b = ranks.
std::vector<int> torus_dims_for(int ranks) {
  int a = 1;
  for (int f = 1; f * f <= ranks; ++f) {
    if (ranks % f == 0) a = f;
  }
  return {a, ranks / a};
}

// Per-rank elements: `count` for most kinds; reduce-scatter and all-to-all cut their input into
// one block per rank, so they take `count` per block.
CollectiveShape shape_of(Algorithm algorithm, CollectiveKind kind, int ranks, std::int64_t count,
                         DType dtype) {
  CollectiveShape shape;
  shape.kind = kind;
  shape.ranks = ranks;
  const bool blocked = kind == CollectiveKind::reduce_scatter || kind == CollectiveKind::all_to_all;
  shape.elements = blocked ? count * ranks : count;
  shape.element_bytes = static_cast<std::int64_t>(dtype_size_bytes(dtype));
  if (algorithm == Algorithm::torus || algorithm == Algorithm::bidirectional_torus) {
    shape.torus_dims = torus_dims_for(ranks);
  }
  for (int r = 0; r < ranks; ++r) shape.permutation.emplace_back(r, (r + 1) % ranks);
  shape.root = ranks - 1;
  return shape;
}

bool reduces(CollectiveKind kind) {
  return kind == CollectiveKind::all_reduce || kind == CollectiveKind::reduce_scatter;
}

// The reference order a schedule of `algorithm` folds in (rings in rank order).
ReductionOrder order_of(Algorithm algorithm, const CollectiveShape& shape) {
  if (algorithm == Algorithm::torus || algorithm == Algorithm::bidirectional_torus) {
    return collectives::reduction_order(algorithm, shape);  // the grid's order
  }
  return order_for_algorithm(algorithm);
}

class CudaScheduleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = missing_cuda_device()) GTEST_SKIP() << *reason;
  }

  // GPU == CPU for every rank; for an all-reduce also == the reference fold. Returns whether the
  // shape could run (the algorithm supports it).
  bool check(Algorithm algorithm, CollectiveKind kind, int ranks, std::int64_t count, DType dtype,
             ReduceOp op, std::uint64_t seed) {
    const CollectiveShape shape = shape_of(algorithm, kind, ranks, count, dtype);
    if (!collectives::supports(algorithm, shape)) return false;
    const collectives::Schedule schedule = collectives::build_schedule(algorithm, shape);
    const std::vector<Array> inputs =
        random_per_device(dtype, {shape.elements}, ranks, seed);
    const std::vector<Array> gpu = run_schedule_on_gpu(schedule, inputs, op);
    const std::vector<Array> cpu =
        collectives::run_schedule_data(schedule, inputs, op, kIeeeNumerics);
    const std::string what =
        fmt::format("{} {} {}[{}] over {} ranks, {}", collectives::algorithm_name(algorithm),
                    collectives::collective_kind_name(kind), dtype_name(dtype), shape.elements,
                    ranks, reduce_op_name(op));
    for (int r = 0; r < ranks; ++r) {
      const auto i = static_cast<std::size_t>(r);
      const auto difference = first_difference(gpu[i], cpu[i]);
      EXPECT_FALSE(difference.has_value()) << what << ": rank " << r << ": GPU " << *difference;
    }
    // XLA:CPU's order (direct) carries bfloat16 sums in float32; the schedule, fed bfloat16 here,
    // rounds at each step. The backend test covers that case through the planner's promotion.
    const ReductionOrder order = order_of(algorithm, shape);
    const bool promoted = dtype == DType::bfloat16 && order.bf16_accumulates_in_f32();
    if (kind == CollectiveKind::all_reduce && !promoted) {
      const Array expected = all_reduce(inputs, op, order);
      for (int r = 0; r < ranks; ++r) {
        const auto difference =
            first_difference(gpu[static_cast<std::size_t>(r)], expected);
        EXPECT_FALSE(difference.has_value())
            << what << ": rank " << r << " against " << order.describe() << ": " << *difference;
      }
    }
    return true;
  }
};

TEST_F(CudaScheduleTest, gpu_schedule_matches_cpu_schedule_for_every_algorithm_kind_and_dtype) {
  std::uint64_t seed = 1;
  int ran = 0;
  for (Algorithm algorithm : kAlgorithms) {
    for (CollectiveKind kind : kKinds) {
      for (int ranks : {2, 3, 4, 5, 6, 8}) {
        for (DType dtype : kDTypes) {
          for (std::int64_t count : {1, 7, 1001}) {
            const ReduceOp op = reduces(kind) ? ReduceOp::sum : ReduceOp::max;
            ran += check(algorithm, kind, ranks, count, dtype, op, seed++) ? 1 : 0;
          }
        }
      }
    }
  }
  EXPECT_GT(ran, 1000);  // most combinations are supported; a shape bug would skip them all
}

// Over 1 Mi elements: several pipeline chunks, counts that do not divide by the ranks.
TEST_F(CudaScheduleTest, gpu_schedule_matches_cpu_schedule_on_over_one_mebi_elements) {
  const std::int64_t count = (std::int64_t{1} << 20) + 3;
  std::uint64_t seed = 100;
  for (Algorithm algorithm : kAlgorithms) {
    for (CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter}) {
      for (int ranks : {3, 8}) {
        for (DType dtype : kDTypes) {
          const std::int64_t per_rank =
              kind == CollectiveKind::reduce_scatter ? count / ranks : count;
          check(algorithm, kind, ranks, per_rank, dtype, ReduceOp::sum, seed++);
        }
      }
    }
  }
}

// XLA:CPU's numerics: every reduction step flushes subnormal operands and results, on the GPU as
// in run_schedule_data.
TEST_F(CudaScheduleTest, gpu_flushes_subnormals_as_the_cpu_schedule_under_xla_cpu_numerics) {
  std::uint64_t seed = 700;
  for (Algorithm algorithm : kAlgorithms) {
    for (CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter}) {
      for (DType dtype : {DType::float32, DType::bfloat16, DType::float64}) {
        for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::min}) {
          const CollectiveShape shape = shape_of(algorithm, kind, 8, 1001, dtype);
          if (!collectives::supports(algorithm, shape)) continue;
          const collectives::Schedule schedule = collectives::build_schedule(algorithm, shape);
          const std::vector<Array> inputs =
              near_subnormal_per_device(dtype, shape.elements, 8, seed++);
          const std::vector<Array> gpu = run_schedule_on_gpu(schedule, inputs, op, kXlaCpuNumerics);
          const std::vector<Array> cpu =
              collectives::run_schedule_data(schedule, inputs, op, kXlaCpuNumerics);
          for (std::size_t r = 0; r < gpu.size(); ++r) {
            const auto difference = first_difference(gpu[r], cpu[r]);
            EXPECT_FALSE(difference.has_value())
                << collectives::algorithm_name(algorithm) << " "
                << collectives::collective_kind_name(kind) << " " << dtype_name(dtype) << " "
                << reduce_op_name(op) << ", rank " << r << ": GPU " << *difference;
          }
        }
      }
    }
  }
}

TEST_F(CudaScheduleTest, gpu_max_and_min_match_cpu_schedule) {
  std::uint64_t seed = 500;
  for (Algorithm algorithm : kAlgorithms) {
    for (ReduceOp op : {ReduceOp::max, ReduceOp::min}) {
      for (DType dtype : kDTypes) {
        check(algorithm, CollectiveKind::all_reduce, 4, 999, dtype, op, seed++);
      }
    }
  }
}

// Runs without a GPU: inputs are checked before any CUDA call.
TEST(CudaScheduleInputs, gpu_schedule_rejects_inputs_of_the_wrong_size) {
  const CollectiveShape shape =
      shape_of(Algorithm::ring, CollectiveKind::all_reduce, 3, 8, DType::float32);
  const collectives::Schedule schedule = collectives::build_schedule(Algorithm::ring, shape);
  std::vector<Array> inputs = random_per_device(DType::float32, {8}, 3, 1);
  inputs[2] = Array(DType::float32, {5});
  try {
    run_schedule_on_gpu(schedule, inputs, ReduceOp::sum);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "run_schedule_on_gpu: input 2 is float32[5], expected float32[8]");
  }
}

// Runs without a GPU: the differential tests above would pass for any order if their data could
// not tell orders apart. On this data, ring and XLA:CPU's order give different float32 bits.
TEST(CudaScheduleTestData, random_data_distinguishes_reduction_orders) {
  const std::vector<Array> inputs = random_per_device(DType::float32, {1001}, 4, 7);
  const Array ring =
      all_reduce(inputs, ReduceOp::sum, {.algorithm = ReductionAlgorithm::nccl_ring});
  const Array direct =
      all_reduce(inputs, ReduceOp::sum, {.algorithm = ReductionAlgorithm::xla_cpu});
  EXPECT_TRUE(first_difference(ring, direct).has_value());
}

// Runs without a GPU: the flushing test above would pass with IEEE kernels if its data had no
// subnormal to flush. On this data, flushed and IEEE sums differ for every dtype it uses.
TEST(CudaScheduleTestData, near_subnormal_data_tells_flushing_from_ieee_sums) {
  const CollectiveShape shape =
      shape_of(Algorithm::ring, CollectiveKind::all_reduce, 8, 1001, DType::float32);
  const collectives::Schedule schedule = collectives::build_schedule(Algorithm::ring, shape);
  for (DType dtype : {DType::float32, DType::bfloat16, DType::float64}) {
    const std::vector<Array> inputs = near_subnormal_per_device(dtype, 1001, 8, 3);
    const Array flushed =
        collectives::run_schedule_data(schedule, inputs, ReduceOp::sum, kXlaCpuNumerics)[0];
    const Array ieee =
        collectives::run_schedule_data(schedule, inputs, ReduceOp::sum, kIeeeNumerics)[0];
    EXPECT_TRUE(first_difference(flushed, ieee).has_value()) << dtype_name(dtype);
  }
}

}  // namespace
}  // namespace spmd::cuda
