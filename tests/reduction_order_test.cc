// Reduction orders (reference/reduction_order.h) and their evaluation (reference/fold_reduce.h).
// Concrete cases follow docs/reduction-orders.md; the numeric edge cases E1..E8 are listed there
// under "Worth knowing" (and in docs/jax-checklist.md §7).

#include "reference/reduction_order.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "reference/array.h"
#include "reference/context.h"
#include "reference/error.h"
#include "reference/fold_reduce.h"
#include "reference/mesh.h"
#include "reference/nccl_ring_loops.h"
#include "reference/reference_backend.h"
#include "reference/ring_order.h"
#include "tests/generators.h"
#include "reference/scalar_arithmetic.h"
#include "tests/error_of.h"

namespace spmd {
namespace {

using Algorithm = ReductionAlgorithm;

ReductionOrder order_of(Algorithm algorithm, std::vector<int> ring = {}) {
  ReductionOrder order;
  order.algorithm = algorithm;
  order.ring = std::move(ring);
  return order;
}

std::vector<int> ranks_upto(int n) {
  std::vector<int> ranks(static_cast<std::size_t>(n));
  std::iota(ranks.begin(), ranks.end(), 0);
  return ranks;
}

void expect_plan(const std::vector<ChunkFold>& actual, const std::vector<ChunkFold>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    SCOPED_TRACE("chunk " + std::to_string(i));
    EXPECT_EQ(actual[i].begin, expected[i].begin);
    EXPECT_EQ(actual[i].end, expected[i].end);
    EXPECT_EQ(actual[i].tree.to_string(), expected[i].tree.to_string());
  }
}

std::string tree_of(const std::vector<ChunkFold>& plan) {
  EXPECT_EQ(plan.size(), 1u);
  return plan.empty() ? "" : plan.front().tree.to_string();
}

// ---------------------------------------------------------------------------------------------
// Fold trees

TEST(FoldTree, CommonShapes) {
  EXPECT_EQ(fold_from_identity({0, 1, 2}).to_string(), "(((id + 0) + 1) + 2)");
  EXPECT_EQ(fold_new_plus_acc({1, 2, 3, 0}).to_string(), "(0 + (3 + (2 + 1)))");
  EXPECT_EQ(fold_right_nested({0, 1, 2, 3}).to_string(), "(0 + (1 + (2 + 3)))");
  EXPECT_EQ(fold_new_plus_acc({4}).to_string(), "4");
  EXPECT_EQ(fold_from_identity({}).to_string(), "id");
}

TEST(FoldTree, LeafRanksLeftToRight) {
  EXPECT_EQ(fold_new_plus_acc({1, 2, 3, 0}).leaf_ranks(), (std::vector<int>{0, 3, 2, 1}));
  EXPECT_EQ(fold_from_identity({2, 0}).leaf_ranks(),
            (std::vector<int>{FoldNode::kIdentityLeaf, 2, 0}));
}

TEST(FoldTree, RejectsBadNodes) {
  FoldTree tree;
  EXPECT_THROW(tree.add_leaf(-1), Error);
  tree.add_leaf(0);
  EXPECT_THROW(tree.add_op(0, 1), Error);
  EXPECT_THROW(fold_new_plus_acc({}), Error);
}

// ---------------------------------------------------------------------------------------------
// Plans of each algorithm

TEST(ReductionOrder, XlaCpuFoldsFromIdentityInRankOrder) {
  const auto plan = order_of(Algorithm::xla_cpu).all_reduce_plan(3, 10, DType::float32);
  expect_plan(plan, {{0, 10, fold_from_identity({0, 1, 2})}});
  EXPECT_EQ(order_of(Algorithm::xla_cpu).reduce_scatter_fold(3, 2).to_string(),
            "(((id + 0) + 1) + 2)");
}

TEST(ReductionOrder, GroupOfOneFoldsFromTheIdentityOnXlaCpuAndIsACopyElsewhere) {
  for (Algorithm algorithm : kAllReductionAlgorithms) {
    SCOPED_TRACE(std::string(reduction_algorithm_name(algorithm)));
    const ReductionOrder order = order_of(algorithm);
    const bool xla = algorithm == Algorithm::xla_cpu;
    expect_plan(order.all_reduce_plan(1, 7, DType::float32),
                {{0, 7, xla ? fold_from_identity({0}) : fold_new_plus_acc({0})}});
    EXPECT_EQ(order.reduce_scatter_fold(1, 0).to_string(), xla ? "(id + 0)" : "0");
  }
}

TEST(ReductionOrder, EmptyCountGivesNoChunks) {
  EXPECT_TRUE(order_of(Algorithm::nccl_ring).all_reduce_plan(4, 0, DType::float32).empty());
  EXPECT_TRUE(order_of(Algorithm::xla_cpu).all_reduce_plan(4, 0, DType::float32).empty());
}

// NCCL ring (docs/reduction-orders.md): chunkCount = alignUp(ceil(10/4), 16/4) = 4; chunk c
// starts at ring index c+1.
TEST(ReductionOrder, NcclRingPartialLoop) {
  const auto plan = order_of(Algorithm::nccl_ring).all_reduce_plan(4, 10, DType::float32);
  expect_plan(plan, {{0, 4, fold_new_plus_acc({1, 2, 3, 0})},
                     {4, 8, fold_new_plus_acc({2, 3, 0, 1})},
                     {8, 10, fold_new_plus_acc({3, 0, 1, 2})}});
}

// The order and the ring schedule share nccl_ring_loops. Its copies had drifted: the order's
// divided by zero for elements over 16 bytes and looped forever on chunks under one element
// (reachable through the fallbacks to nccl_ring, which do not check nccl_chunk_bytes). NCCL's
// chunks always hold whole elements, so the shared split counts a smaller chunk as one element
// and aligns the last loop to at least one element.
TEST(ReductionOrder, NcclRingLoopsHoldAtLeastOneElement) {
  using Loops = std::vector<std::vector<ElementRange>>;
  // 32-byte elements: no 16-byte alignment, chunks of ceil(5 / 2) = 3.
  EXPECT_EQ(nccl_ring_loops(5, 2, 32, 1024), (Loops{{{0, 3}, {3, 5}}}));
  // 2-byte chunks of 4-byte elements: full loops of one element per chunk, then the last loop's
  // alignUp(ceil(1 / 3), 4) = 4.
  EXPECT_EQ(nccl_ring_loops(10, 3, 4, 2), (Loops{{{0, 1}, {1, 2}, {2, 3}},
                                                 {{3, 4}, {4, 5}, {5, 6}},
                                                 {{6, 7}, {7, 8}, {8, 9}},
                                                 {{9, 10}, {10, 10}, {10, 10}}}));
  ReductionOrder halving_doubling = order_of(Algorithm::halving_doubling);
  halving_doubling.nccl_chunk_bytes = 2;
  ReductionOrder one_element_chunks = order_of(Algorithm::nccl_ring);
  one_element_chunks.nccl_chunk_bytes = 4;
  expect_plan(halving_doubling.all_reduce_plan(3, 10, DType::float32),
              one_element_chunks.all_reduce_plan(3, 10, DType::float32));
}

TEST(ReductionOrder, NcclRingFollowsTheRingOrder) {
  const ReductionOrder order = order_of(Algorithm::nccl_ring, {0, 2, 1, 3});
  const auto plan = order.all_reduce_plan(4, 4, DType::float32);
  // ceil(4/4) = 1 aligned to 4 elements: one chunk, ring positions 1, 2, 3, 0 = ranks 2, 1, 3, 0.
  expect_plan(plan, {{0, 4, fold_new_plus_acc({2, 1, 3, 0})}});
  // Reduce-scatter: rank 1 sits at ring index 2; its block runs ring indices 3, 0, 1, 2.
  EXPECT_EQ(order.reduce_scatter_fold(4, 1), fold_new_plus_acc({3, 0, 2, 1}));
}

TEST(ReductionOrder, NcclRingAlignsToSixteenBytes) {
  // float64: 16/8 = 2 elements; int8: 16 elements.
  const auto f64 = order_of(Algorithm::nccl_ring).all_reduce_plan(3, 7, DType::float64);
  expect_plan(f64, {{0, 4, fold_new_plus_acc({1, 2, 0})}, {4, 7, fold_new_plus_acc({2, 0, 1})}});
  const auto i8 = order_of(Algorithm::nccl_ring).all_reduce_plan(3, 20, DType::int8);
  expect_plan(i8, {{0, 16, fold_new_plus_acc({1, 2, 0})}, {16, 20, fold_new_plus_acc({2, 0, 1})}});
}

TEST(ReductionOrder, NcclRingFullLoopsThenPartialLoop) {
  ReductionOrder order = order_of(Algorithm::nccl_ring);
  order.nccl_chunk_bytes = 16;  // 4 float32 per chunk, loops of 8 elements for 2 ranks
  const FoldTree first = fold_new_plus_acc({1, 0});
  const FoldTree second = fold_new_plus_acc({0, 1});
  expect_plan(order.all_reduce_plan(2, 20, DType::float32),
              {{0, 4, first},
               {4, 8, second},
               {8, 12, first},
               {12, 16, second},
               {16, 20, first}});  // remainder 4: alignUp(2, 4) = 4, chunk 1 empty
}

TEST(ReductionOrder, NcclRingDefaultChunkIsTwoMiB) {
  const std::int64_t full = 524288;  // float32 elements in 2 MiB
  const auto plan =
      order_of(Algorithm::nccl_ring).all_reduce_plan(2, 2 * full + 10, DType::float32);
  expect_plan(plan, {{0, full, fold_new_plus_acc({1, 0})},
                     {full, 2 * full, fold_new_plus_acc({0, 1})},
                     {2 * full, 2 * full + 8, fold_new_plus_acc({1, 0})},  // alignUp(5, 4)
                     {2 * full + 8, 2 * full + 10, fold_new_plus_acc({0, 1})}});
}

TEST(ReductionOrder, NcclTreeChainFoldsFromTheLastMember) {
  EXPECT_EQ(
      tree_of(
          order_of(Algorithm::nccl_tree_chain, {2, 0, 1}).all_reduce_plan(3, 100, DType::float32)),
      "(2 + (0 + 1))");
}

// Gloo ring (docs/reduction-orders.md): bytes 40, numSeg = roundUp(max(1, 8), 4) = 8, spr = 2,
// segBytes = roundUp(5, 4) = 8.
TEST(ReductionOrder, GlooRingSmallMessage) {
  const auto plan = order_of(Algorithm::gloo_ring).all_reduce_plan(4, 10, DType::float32);
  expect_plan(plan, {{0, 4, fold_new_plus_acc({3, 2, 1, 0})},
                     {4, 8, fold_new_plus_acc({0, 3, 2, 1})},
                     {8, 10, fold_new_plus_acc({1, 0, 3, 2})}});
  EXPECT_EQ(order_of(Algorithm::gloo_ring).reduce_scatter_fold(4, 2),
            fold_new_plus_acc({1, 0, 3, 2}));
}

// 12,000,004 bytes: numSeg = roundUp(max(12, 8), 4) = 12, spr = 3,
// segBytes = roundUp(1,000,001, 4) = 1,000,004, so chunks of 3,000,012 bytes = 750,003 elements.
TEST(ReductionOrder, GlooRingLargeMessage) {
  const auto plan = order_of(Algorithm::gloo_ring).all_reduce_plan(4, 3000001, DType::float32);
  ASSERT_EQ(plan.size(), 4u);
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(plan[c].begin, c * 750003);
    EXPECT_EQ(plan[c].tree, fold_new_plus_acc({(c + 3) % 4, (c + 2) % 4, (c + 1) % 4, c}));
  }
  EXPECT_EQ(plan.back().end, 3000001);
}

// maxSegmentSize 64: numSeg = roundUp(max(ceil(400/64) = 7, 6), 3) = 9, spr = 3,
// segBytes = roundUp(45, 4) = 48: chunks of 144 bytes = 36 elements.
TEST(ReductionOrder, GlooRingSmallSegmentLimit) {
  ReductionOrder order = order_of(Algorithm::gloo_ring);
  order.gloo_max_segment_bytes = 64;
  const auto plan = order.all_reduce_plan(3, 100, DType::float32);
  expect_plan(plan, {{0, 36, fold_new_plus_acc({2, 1, 0})},
                     {36, 72, fold_new_plus_acc({0, 2, 1})},
                     {72, 100, fold_new_plus_acc({1, 0, 2})}});
}

TEST(ReductionOrder, GlooRingChunked) {
  // chunks = 4, chunkSize = max(256, 500) = 500; chunk pair j = chunks 2j, 2j+1.
  expect_plan(order_of(Algorithm::gloo_ring_chunked).all_reduce_plan(2, 2000, DType::float32),
              {{0, 500, fold_new_plus_acc({0, 1})},
               {500, 1000, fold_new_plus_acc({0, 1})},
               {1000, 1500, fold_new_plus_acc({1, 0})},
               {1500, 2000, fold_new_plus_acc({1, 0})}});
  // Small messages fit in chunk 0 (chunkSize 256).
  expect_plan(order_of(Algorithm::gloo_ring_chunked).all_reduce_plan(3, 300, DType::float32),
              {{0, 256, fold_new_plus_acc({0, 1, 2})}, {256, 300, fold_new_plus_acc({0, 1, 2})}});
  EXPECT_EQ(order_of(Algorithm::gloo_ring_chunked).reduce_scatter_fold(3, 0),
            fold_new_plus_acc({1, 2, 0}));
}

TEST(ReductionOrder, GlooBcube) {
  const ReductionOrder order = order_of(Algorithm::gloo_bcube);
  EXPECT_EQ(tree_of(order.all_reduce_plan(8, 5, DType::float32)),
            "(((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)))");
}

// n = 3: chunk g of ceil(10/3) = 4 elements is (x_g + first other) + second other.
TEST(ReductionOrder, GlooBcubeGroupOfThree) {
  const auto plan = order_of(Algorithm::gloo_bcube).all_reduce_plan(3, 10, DType::float32);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].begin, 0);
  EXPECT_EQ(plan[1].begin, 4);
  EXPECT_EQ(plan[2].begin, 8);
  EXPECT_EQ(plan[2].end, 10);
  EXPECT_EQ(plan[0].tree.to_string(), "((0 + 1) + 2)");
  EXPECT_EQ(plan[1].tree.to_string(), "((1 + 0) + 2)");
  EXPECT_EQ(plan[2].tree.to_string(), "((2 + 0) + 1)");
}

TEST(ReductionOrder, GlooBcubeRejectsUnmodelledSizes) {
  try {
    order_of(Algorithm::gloo_bcube).all_reduce_plan(6, 10, DType::float32);
    FAIL() << "expected spmd::Error";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(),
                 "gloo_bcube order for group size 6 is not modelled, expected a power of two or 3");
  }
}

// Open MPI ring (docs/reduction-orders.md): the first 10 % 4 = 2 blocks have 3 elements, the
// others 2.
TEST(ReductionOrder, MpiRingBlocks) {
  expect_plan(order_of(Algorithm::mpi_ring).all_reduce_plan(4, 10, DType::float32),
              {{0, 3, fold_new_plus_acc({0, 1, 2, 3})},
               {3, 6, fold_new_plus_acc({1, 2, 3, 0})},
               {6, 8, fold_new_plus_acc({2, 3, 0, 1})},
               {8, 10, fold_new_plus_acc({3, 0, 1, 2})}});
  EXPECT_EQ(order_of(Algorithm::mpi_ring).reduce_scatter_fold(4, 3),
            fold_new_plus_acc({0, 1, 2, 3}));
}

TEST(ReductionOrder, MpiRingFallsBackToRecursiveDoublingBelowOneElementPerRank) {
  EXPECT_EQ(tree_of(order_of(Algorithm::mpi_ring).all_reduce_plan(4, 3, DType::float32)),
            "((0 + 1) + (2 + 3))");
}

// n = 6: pof2 = 4, r = 2: v0 = x0+x1, v1 = x2+x3, v2 = x4, v3 = x5.
TEST(ReductionOrder, MpiRecursiveDoublingAndRabenseifner) {
  for (Algorithm algorithm : {Algorithm::mpi_recursive_doubling, Algorithm::mpi_rabenseifner}) {
    const ReductionOrder order = order_of(algorithm);
    EXPECT_EQ(tree_of(order.all_reduce_plan(6, 10, DType::float32)),
              "(((0 + 1) + (2 + 3)) + (4 + 5))");
    EXPECT_EQ(tree_of(order.all_reduce_plan(3, 10, DType::float32)), "((0 + 1) + 2)");
    EXPECT_EQ(tree_of(order.all_reduce_plan(7, 10, DType::float32)),
              "(((0 + 1) + (2 + 3)) + ((4 + 5) + 6))");
    EXPECT_EQ(order.reduce_scatter_fold(6, 4).to_string(), "(((0 + 1) + (2 + 3)) + (4 + 5))");
  }
  // Rabenseifner falls back to basic linear when count < pof2.
  EXPECT_EQ(tree_of(order_of(Algorithm::mpi_rabenseifner).all_reduce_plan(6, 3, DType::float32)),
            "(0 + (1 + (2 + (3 + (4 + 5)))))");
  EXPECT_EQ(
      tree_of(order_of(Algorithm::mpi_recursive_doubling).all_reduce_plan(6, 3, DType::float32)),
      "(((0 + 1) + (2 + 3)) + (4 + 5))");
}

TEST(ReductionOrder, MpiLinear) {
  EXPECT_EQ(tree_of(order_of(Algorithm::mpi_linear).all_reduce_plan(4, 10, DType::float32)),
            "(0 + (1 + (2 + 3)))");
}

TEST(ReductionOrder, BinaryTreeIsHeapOrdered) {
  EXPECT_EQ(tree_of(order_of(Algorithm::binary_tree).all_reduce_plan(5, 10, DType::float32)),
            "((0 + ((1 + 3) + 4)) + 2)");
  EXPECT_EQ(
      tree_of(
          order_of(Algorithm::binary_tree, {4, 3, 2, 1, 0}).all_reduce_plan(5, 10, DType::float32)),
      "((4 + ((3 + 1) + 0)) + 2)");
}

TEST(ReductionOrder, RejectsBadRingsAndSizes) {
  for (std::vector<int> ring :
       {std::vector<int>{0, 1, 1}, std::vector<int>{0, 1}, std::vector<int>{0, 1, 3}}) {
    try {
      order_of(Algorithm::nccl_ring, ring).all_reduce_plan(3, 10, DType::float32);
      FAIL() << "expected spmd::Error";
    } catch (const Error& error) {
      EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos);
      EXPECT_NE(std::string(error.what()).find("permutation of 0..2"), std::string::npos);
    }
  }
  EXPECT_THROW(order_of(Algorithm::xla_cpu).all_reduce_plan(0, 10, DType::float32), Error);
  EXPECT_THROW(order_of(Algorithm::xla_cpu).reduce_scatter_fold(3, 3), Error);
  ReductionOrder tiny_chunks = order_of(Algorithm::nccl_ring);
  tiny_chunks.nccl_chunk_bytes = 2;
  EXPECT_THROW(tiny_chunks.all_reduce_plan(2, 10, DType::float32), Error);
}

TEST(ReductionOrder, NamesRoundTrip) {
  for (Algorithm algorithm : kAllReductionAlgorithms) {
    EXPECT_EQ(reduction_algorithm_from_name(reduction_algorithm_name(algorithm)), algorithm);
  }
  EXPECT_EQ(reduction_algorithm_name(Algorithm::nccl_ring), "nccl_ring");
  try {
    reduction_algorithm_from_name("ring");
    FAIL() << "expected spmd::Error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("'ring'"), std::string::npos);
    EXPECT_NE(message.find("xla_cpu, nccl_ring,"), std::string::npos);
    EXPECT_NE(message.find("binary_tree"), std::string::npos);
  }
}

TEST(ReductionOrder, Describe) {
  EXPECT_EQ(order_of(Algorithm::xla_cpu).describe(), "xla_cpu");
  EXPECT_EQ(order_of(Algorithm::nccl_ring, {0, 2, 1, 3}).describe(), "nccl_ring(ring=0,2,1,3)");
  ReductionOrder gloo = order_of(Algorithm::gloo_ring);
  gloo.gloo_max_segment_bytes = 64;
  EXPECT_EQ(gloo.describe(), "gloo_ring(gloo_max_segment_bytes=64)");
}

// ---------------------------------------------------------------------------------------------
// A device ring and the groups of a mesh

TEST(ReductionOrder, GroupOrderIsTheDeviceRingRestrictedToTheGroupAsRanks) {
  // --ring 0,2,1,3 over a 4-device mesh: the ring visits device 0, then 2, then 1, then 3.
  const ReductionOrder device_ring = order_of(Algorithm::nccl_ring, {0, 2, 1, 3});
  EXPECT_EQ(device_ring.for_group(std::vector<int>{2, 3}).ring, (std::vector<int>{0, 1}));
  EXPECT_EQ(device_ring.for_group(std::vector<int>{1, 2}).ring, (std::vector<int>{1, 0}));
  EXPECT_EQ(device_ring.for_group(std::vector<int>{0, 1, 2}).ring, (std::vector<int>{0, 2, 1}));
  // Rank r is the r-th device of the group's list: devices 2, 0, 1 are ranks 0, 1, 2, and the
  // ring visits device 0 (rank 1), then 2 (rank 0), then 1 (rank 2).
  EXPECT_EQ(device_ring.for_group(std::vector<int>{2, 0, 1}).ring, (std::vector<int>{1, 0, 2}));
  EXPECT_EQ(device_ring.for_group(std::vector<int>{3, 1, 0, 2}).ring,
            (std::vector<int>{2, 3, 1, 0}));
  EXPECT_TRUE(order_of(Algorithm::nccl_ring).for_group(std::vector<int>{1, 3}).ring.empty());
}

TEST(ReductionOrder, DeviceRingMustListEveryDeviceOnce) {
  EXPECT_NO_THROW(order_of(Algorithm::nccl_ring, {0, 2, 1, 3}).check_device_ring(4));
  EXPECT_NO_THROW(order_of(Algorithm::nccl_ring).check_device_ring(8));
  EXPECT_EQ(test_errors::error_of([] {
              order_of(Algorithm::nccl_ring, {0, 2, 1, 3}).check_device_ring(8);
            }),
            "ring 0,2,1,3 for 8 devices, expected a permutation of the device ids 0..7");
  EXPECT_EQ(test_errors::error_of([] {
              order_of(Algorithm::nccl_ring, {0, 2, 2, 3}).check_device_ring(4);
            }),
            "ring 0,2,2,3 for 4 devices, expected a permutation of the device ids 0..3");
  EXPECT_EQ(test_errors::error_of([] {
              order_of(Algorithm::nccl_ring, {0, 2, 1}).for_group(std::vector<int>{1, 3});
            }),
            "ring 0,2,1 does not visit each device of the group 1,3 once, expected a "
            "permutation of the mesh's device ids");
}

// psum over axis_index_groups [[0, 1, 2], [3]] on the reference with the device ring 0,2,1,3:
// the group of three folds along ranks 0, 2, 1 (its devices in ring order), which gives other
// bits than its rank order for these values (1e8 + 1 rounds to 1e8 in float32).
TEST(ReductionOrder, ReferenceFoldsEachGroupAlongTheDeviceRingRestrictedToIt) {
  const std::vector<float> values = {1e8f, 1.0f, -1e8f, 3.0f};
  std::vector<Values> inputs;
  std::vector<Array> group_inputs;
  for (float v : values) {
    inputs.push_back({Array::from_values<float>({12}, std::vector<float>(12, v))});
    if (inputs.size() <= 3) group_inputs.push_back(inputs.back()[0]);
  }
  ReferenceBackend reference(order_of(Algorithm::nccl_ring, {0, 2, 1, 3}));
  const DeviceFunction psum_in_groups = [](Context& ctx, const Values& in) -> Values {
    return {ctx.psum(in[0], "i", AxisIndexGroups{{0, 1, 2}, {3}})};
  };
  const std::vector<Values> out =
      reference.run(Mesh({4}, {"i"}), inputs, psum_in_groups, /*check_vma=*/false);
  const Array expected =
      all_reduce(group_inputs, ReduceOp::sum, order_of(Algorithm::nccl_ring, {0, 2, 1}));
  const Array rank_order = all_reduce(group_inputs, ReduceOp::sum, order_of(Algorithm::nccl_ring));
  ASSERT_FALSE(expected.bitwise_equal(rank_order)) << "the data must be order-sensitive";
  for (int d = 0; d < 3; ++d)
    EXPECT_TRUE(out[static_cast<std::size_t>(d)][0].bitwise_equal(expected)) << d;
  EXPECT_TRUE(out[3][0].bitwise_equal(inputs[3][0]));
}

// ---------------------------------------------------------------------------------------------
// Random data and an independent per-element evaluation

// Floats with random mantissas and exponents in [-12, 12], so that the order of additions
// changes the result; integers with random bits; bools at random. With `Specials`, about one
// float in 32 is a special value instead. Sums get no NaN inputs: a NaN's payload may depend on
// operand order, which the compiler is free to swap for a commutative +; inf - inf still gives
// the one default NaN.
enum class Specials { none, zeros_and_infinities, with_nan };

template <class T>
T random_special(std::mt19937_64& rng, Specials specials) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> choices = {0.0f, -0.0f, inf, -inf};
  if (specials == Specials::with_nan) choices.push_back(std::numeric_limits<float>::quiet_NaN());
  const float value = choices[rng() % choices.size()];
  if constexpr (arith::is_half_v<T>) return T::from_float(value);
  else return static_cast<T>(value);
}

template <class T>
T random_value(std::mt19937_64& rng, Specials specials) {
  if constexpr (std::is_same_v<T, bool>) {
    return (rng() & 1) != 0;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(rng());
  } else {
    if (specials != Specials::none && rng() % 32 == 0) return random_special<T>(rng, specials);
    const double mantissa = 1.0 + std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    const int exponent = std::uniform_int_distribution<int>(-12, 12)(rng);
    const double value = std::ldexp((rng() & 1) ? -mantissa : mantissa, exponent);
    if constexpr (arith::is_half_v<T>) return T::from_float(static_cast<float>(value));
    else return static_cast<T>(value);
  }
}

Array random_array(DType dtype, std::int64_t count, std::mt19937_64& rng, Specials specials) {
  return visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> values;
    for (std::int64_t i = 0; i < count; ++i) values.push_back(random_value<T>(rng, specials));
    return Array::from_values<T>({count}, values);
  });
}

std::vector<Array> random_contributions(int n, DType dtype, std::int64_t count,
                                        std::mt19937_64& rng, Specials specials = Specials::none) {
  std::vector<Array> contributions;
  for (int r = 0; r < n; ++r) contributions.push_back(random_array(dtype, count, rng, specials));
  return contributions;
}

template <class Acc, class Leaf, class Combine>
Acc evaluate_node(const FoldTree& tree, int node, const Leaf& leaf, Acc identity,
                  const Combine& combine) {
  const FoldNode& n = tree.nodes[static_cast<std::size_t>(node)];
  if (n.rank == FoldNode::kIdentityLeaf) return identity;
  if (n.rank >= 0) return leaf(n.rank);
  return combine(evaluate_node(tree, n.lhs, leaf, identity, combine),
                 evaluate_node(tree, n.rhs, leaf, identity, combine));
}

// Element e of the reduction of `inputs` by `tree`, evaluated recursively. A single-leaf tree is
// a copy of that rank's bits.
template <class T, class Acc>
T evaluate_element(const FoldTree& tree, std::span<const Array> inputs, std::int64_t e,
                   ReduceOp op) {
  const auto input = [&](int rank) { return inputs[rank].values<T>()[e]; };
  const int root = static_cast<int>(tree.nodes.size()) - 1;
  if (tree.nodes.back().rank >= 0) return input(tree.nodes.back().rank);
  const auto leaf = [&](int rank) -> Acc {
    if constexpr (std::is_same_v<Acc, T>) return input(rank);
    else return input(rank).to_float();
  };
  Acc result{};
  switch (op) {
    case ReduceOp::sum:
      result = evaluate_node<Acc>(tree, root, leaf, arith::sum_identity<Acc>(),
                                  [](Acc a, Acc b) { return arith::add(a, b); });
      break;
    case ReduceOp::max:
      result = evaluate_node<Acc>(tree, root, leaf, arith::max_identity<Acc>(),
                                  [](Acc a, Acc b) { return arith::max(a, b); });
      break;
    case ReduceOp::min:
      result = evaluate_node<Acc>(tree, root, leaf, arith::min_identity<Acc>(),
                                  [](Acc a, Acc b) { return arith::min(a, b); });
      break;
  }
  if constexpr (std::is_same_v<Acc, T>) return result;
  else return T::from_float(result);
}

// The all-reduce evaluated element by element from the plan, written independently of
// fold_reduce.cc.
Array expected_all_reduce(std::span<const Array> inputs, ReduceOp op,
                          const std::vector<ChunkFold>& chunks, bool bf16_in_f32) {
  Array out(inputs[0].dtype(), inputs[0].shape());
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    auto values = out.mutable_values<T>();
    for (const ChunkFold& chunk : chunks) {
      for (std::int64_t e = chunk.begin; e < chunk.end; ++e) {
        if constexpr (std::is_same_v<T, BFloat16>) {
          if (bf16_in_f32 && op == ReduceOp::sum) {
            values[e] = evaluate_element<T, float>(chunk.tree, inputs, e, op);
            continue;
          }
        }
        values[e] = evaluate_element<T, T>(chunk.tree, inputs, e, op);
      }
    }
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Properties

Algorithm gen_algorithm() {
  return *rc::gen::elementOf(std::vector<Algorithm>(std::begin(kAllReductionAlgorithms),
                                                    std::end(kAllReductionAlgorithms)));
}

bool is_unmodelled(Algorithm algorithm, int n) {
  return algorithm == Algorithm::gloo_bcube && !std::has_single_bit(static_cast<unsigned>(n)) &&
         n != 3;
}

// A random order: algorithm, ring (a permutation or empty), small or default chunk sizes.
ReductionOrder gen_order(int n) {
  ReductionOrder order = order_of(gen_algorithm());
  if (*rc::gen::arbitrary<bool>()) {
    order.ring = ranks_upto(n);
    std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>());
    std::shuffle(order.ring.begin(), order.ring.end(), rng);
  }
  order.nccl_chunk_bytes = *rc::gen::elementOf(std::vector<std::int64_t>{2 << 20, 64, 1000});
  order.gloo_max_segment_bytes = *rc::gen::elementOf(std::vector<std::int64_t>{1 << 20, 64, 100});
  return order;
}

// Every rank 0..n-1 appears exactly once as a leaf, plus at most one identity leaf; every node
// but the root is an operand of exactly one later node. A group of one is a copy, or the
// identity plus rank 0 under xla_cpu.
void check_tree_shape(const FoldTree& tree, int n, const ReductionOrder& order) {
  RC_ASSERT(!tree.nodes.empty());
  std::vector<int> ranks;
  int identities = 0;
  std::vector<int> uses(tree.nodes.size(), 0);
  for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
    const FoldNode& node = tree.nodes[i];
    if (node.rank == FoldNode::kIdentityLeaf) {
      ++identities;
    } else if (node.rank >= 0) {
      ranks.push_back(node.rank);
    } else {
      RC_ASSERT(node.lhs >= 0 && node.lhs < static_cast<int>(i));
      RC_ASSERT(node.rhs >= 0 && node.rhs < static_cast<int>(i));
      ++uses[static_cast<std::size_t>(node.lhs)];
      ++uses[static_cast<std::size_t>(node.rhs)];
    }
  }
  std::sort(ranks.begin(), ranks.end());
  RC_ASSERT(ranks == ranks_upto(n));
  RC_ASSERT(identities <= 1);
  for (std::size_t i = 0; i + 1 < uses.size(); ++i) RC_ASSERT(uses[i] == 1);
  if (n == 1) {
    RC_ASSERT(tree.to_string() ==
              (order.algorithm == ReductionAlgorithm::xla_cpu ? "(id + 0)" : "0"));
  }
}

RC_GTEST_PROP(ReductionOrderProperty, PlansCoverTheCountAndFoldEveryRankOnce, ()) {
  const int n = *rc::gen::inRange(1, 17);
  const std::int64_t count = *rc::gen::inRange<std::int64_t>(0, 5001);
  const DType dtype =
      *rc::gen::elementOf(std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes)));
  const ReductionOrder order = gen_order(n);
  if (is_unmodelled(order.algorithm, n)) {
    RC_ASSERT_THROWS_AS(order.all_reduce_plan(n, count, dtype), Error);
    RC_ASSERT_THROWS_AS(order.reduce_scatter_fold(n, 0), Error);
    return;
  }
  const auto plan = order.all_reduce_plan(n, count, dtype);
  std::int64_t next = 0;
  for (const ChunkFold& chunk : plan) {
    RC_ASSERT(chunk.begin == next);
    RC_ASSERT(chunk.begin < chunk.end);
    check_tree_shape(chunk.tree, n, order);
    next = chunk.end;
  }
  RC_ASSERT(next == count);
  for (int destination = 0; destination < n; ++destination) {
    check_tree_shape(order.reduce_scatter_fold(n, destination), n, order);
  }
}

template <class T>
Array wrapping_sum(std::span<const Array> inputs) {
  std::vector<T> sums(static_cast<std::size_t>(inputs[0].size()));
  for (std::size_t e = 0; e < sums.size(); ++e) {
    std::uint64_t sum = 0;
    for (const Array& input : inputs) {
      sum += static_cast<std::uint64_t>(input.values<T>()[e]);
    }
    sums[e] = static_cast<T>(sum);
  }
  return Array::from_values<T>(inputs[0].shape(), sums);
}

RC_GTEST_PROP(ReductionOrderProperty, IntegerSumsEqualThePlainWrappingSum, ()) {
  const int n = *rc::gen::inRange(1, 17);
  const std::int64_t count = *rc::gen::inRange<std::int64_t>(0, 5001);
  const DType dtype = *rc::gen::elementOf(
      std::vector<DType>{DType::int8, DType::uint8, DType::int32, DType::int64});
  const ReductionOrder order = gen_order(n);
  RC_PRE(!is_unmodelled(order.algorithm, n));
  std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>());
  const auto inputs = random_contributions(n, dtype, count, rng);
  const Array result = all_reduce(inputs, ReduceOp::sum, order);
  const Array expected = visit_dtype(dtype, [&](auto zero) -> Array {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return wrapping_sum<T>(inputs);
    else return Array();
  });
  RC_ASSERT(result.bitwise_equal(expected));
}

template <class T>
Array xla_cpu_left_fold(std::span<const Array> inputs) {
  const auto count = static_cast<std::size_t>(inputs[0].size());
  // XLA:CPU runs with subnormals flushed (DAZ + FTZ) for float32, bfloat16 and float64.
  const auto ftz = [](auto value) { return arith::flush_subnormal(value); };
  std::vector<T> out(count);
  for (std::size_t e = 0; e < count; ++e) {
    if constexpr (std::is_same_v<T, BFloat16>) {
      float acc = 0.0f;  // AllReducePromotion: f32 sum, one rounding at the end
      for (const Array& input : inputs) acc = ftz(acc + ftz(input.values<T>()[e].to_float()));
      out[e] = BFloat16::from_float(acc);
    } else if constexpr (std::is_same_v<T, Float16>) {
      Float16 acc{};  // +0, rounded to float16 at every step
      for (const Array& input : inputs) {
        acc = Float16::from_float(acc.to_float() + input.values<T>()[e].to_float());
      }
      out[e] = acc;
    } else {
      T acc = T{0};
      for (const Array& input : inputs) acc = ftz(acc + ftz(input.values<T>()[e]));
      out[e] = acc;
    }
  }
  return Array::from_values<T>(inputs[0].shape(), out);
}

const std::vector<DType> kFloatDTypes = {DType::float64, DType::float32, DType::float16,
                                         DType::bfloat16};

RC_GTEST_PROP(ReductionOrderProperty, XlaCpuFloatSumIsARankOrderFoldFromPositiveZero, ()) {
  const int n = *rc::gen::inRange(1, 17);
  const std::int64_t count = *rc::gen::inRange<std::int64_t>(0, 5001);
  const DType dtype = *rc::gen::elementOf(kFloatDTypes);
  std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>());
  const auto inputs = random_contributions(n, dtype, count, rng, Specials::zeros_and_infinities);
  const Array result = all_reduce(inputs, ReduceOp::sum, order_of(Algorithm::xla_cpu));
  const Array expected = visit_dtype(dtype, [&](auto zero) -> Array {
    using T = decltype(zero);
    if constexpr (std::is_floating_point_v<T> || arith::is_half_v<T>) {
      return xla_cpu_left_fold<T>(inputs);
    } else {
      return Array();
    }
  });
  RC_ASSERT(result.bitwise_equal(expected));
}

RC_GTEST_PROP(ReductionOrderProperty, FloatReductionsFollowTheirChunkTrees, ()) {
  const int n = *rc::gen::inRange(1, 17);
  const std::int64_t count = *rc::gen::inRange<std::int64_t>(0, 5001);
  const DType dtype = *rc::gen::elementOf(kFloatDTypes);
  const ReduceOp op = *rc::gen::elementOf(
      std::vector<ReduceOp>{ReduceOp::sum, ReduceOp::sum, ReduceOp::max, ReduceOp::min});
  const ReductionOrder order = gen_order(n);
  RC_PRE(!is_unmodelled(order.algorithm, n));
  const Specials specials = !*rc::gen::arbitrary<bool>() ? Specials::none
                            : op == ReduceOp::sum        ? Specials::zeros_and_infinities
                                                         : Specials::with_nan;
  std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>());
  const auto inputs = random_contributions(n, dtype, count, rng, specials);

  const auto plan = order.all_reduce_plan(n, count, dtype);
  const bool f32 = order.bf16_accumulates_in_f32();
  RC_ASSERT(
      all_reduce(inputs, op, order).bitwise_equal(expected_all_reduce(inputs, op, plan, f32)));

  const int destination = *rc::gen::inRange(0, n);
  const FoldTree block_tree = order.reduce_scatter_fold(n, destination);
  const std::vector<ChunkFold> whole = {{0, count, block_tree}};
  RC_ASSERT(reduce_with_tree(inputs, op, block_tree, order)
                .bitwise_equal(expected_all_reduce(inputs, op, whole, f32)));
}

// Different orders give different bits on spread data (the test data is order-sensitive).
TEST(FoldReduce, SpreadDataIsOrderSensitive) {
  std::mt19937_64 rng(7);
  const auto inputs = random_contributions(8, DType::float32, 1000, rng);
  const Array xla = all_reduce(inputs, ReduceOp::sum, order_of(Algorithm::xla_cpu));
  const Array ring = all_reduce(inputs, ReduceOp::sum, order_of(Algorithm::nccl_ring));
  const Array tree = all_reduce(inputs, ReduceOp::sum, order_of(Algorithm::binary_tree));
  EXPECT_FALSE(xla.bitwise_equal(ring));
  EXPECT_FALSE(ring.bitwise_equal(tree));
}

// Several NCCL loops of the default 2 MiB chunk, spot-checked element by element.
TEST(FoldReduce, LargeNcclRingMatchesPerElementEvaluation) {
  std::mt19937_64 rng(11);
  const std::int64_t count = 3 * 524288 + 1000;
  const auto inputs = random_contributions(3, DType::float32, count, rng);
  const ReductionOrder order = order_of(Algorithm::nccl_ring, {2, 0, 1});
  const Array result = all_reduce(inputs, ReduceOp::sum, order);
  const auto plan = order.all_reduce_plan(3, count, DType::float32);
  ASSERT_EQ(plan.size(), 6u);  // 3 full chunks, then 1000 = 336 + 336 + 328
  for (const ChunkFold& chunk : plan) {
    for (std::int64_t e : {chunk.begin, (chunk.begin + chunk.end) / 2, chunk.end - 1}) {
      const float expected = evaluate_element<float, float>(chunk.tree, inputs, e, ReduceOp::sum);
      EXPECT_EQ(std::bit_cast<std::uint32_t>(result.values<float>()[e]),
                std::bit_cast<std::uint32_t>(expected))
          << "element " << e;
    }
  }
}

TEST(FoldReduce, KeepsShapeAndWorksOnMultiDimensionalArrays) {
  const auto a = Array::from_values<float>({2, 2}, {1, 2, 3, 4});
  const auto b = Array::from_values<float>({2, 2}, {10, 20, 30, 40});
  const std::vector<Array> inputs = {a, b};
  const Array sum = all_reduce(inputs, ReduceOp::sum, order_of(Algorithm::nccl_ring));
  EXPECT_EQ(sum.shape(), (Shape{2, 2}));
  EXPECT_EQ(sum.values_string(), "[11, 22, 33, 44]");
  EXPECT_EQ(sum.varying_axes(), 0u);
}

TEST(FoldReduce, RejectsBadInputs) {
  const ReductionOrder order;
  EXPECT_THROW(all_reduce({}, ReduceOp::sum, order), Error);
  const std::vector<Array> mismatched = {Array::from_values<float>({2}, {1, 2}),
                                         Array::from_values<float>({3}, {1, 2, 3})};
  EXPECT_THROW(all_reduce(mismatched, ReduceOp::sum, order), Error);
  const std::vector<Array> bools = {Array::scalar(true), Array::scalar(false)};
  EXPECT_THROW(all_reduce(bools, ReduceOp::sum, order), Error);
  const std::vector<Array> floats = {Array::scalar(1.0f), Array::scalar(2.0f)};
  FoldTree reused;  // node 0 used twice: not a tree
  const int leaf = reused.add_leaf(0);
  reused.add_op(leaf, leaf);
  EXPECT_THROW(reduce_with_tree(floats, ReduceOp::sum, reused, order), Error);
  EXPECT_THROW(reduce_with_tree(floats, ReduceOp::sum, fold_new_plus_acc({0, 2}), order), Error);
  EXPECT_THROW(reduce_with_tree(floats, ReduceOp::sum, FoldTree{}, order), Error);
}

// ---------------------------------------------------------------------------------------------
// Numeric edge cases (docs/reduction-orders.md, "Worth knowing")

template <class T>
std::vector<Array> scalars(std::vector<T> values) {
  std::vector<Array> arrays;
  for (T value : values) arrays.push_back(Array::scalar<T>(value));
  return arrays;
}

double reduce_scalar(const std::vector<Array>& inputs, ReduceOp op, Algorithm algorithm) {
  return all_reduce(inputs, op, order_of(algorithm)).element_as_double(0);
}

TEST(FoldReduceEdgeCases, E1RankOrderFoldLosesTheOne) {
  EXPECT_EQ(
      reduce_scalar(scalars<float>({1e8f, 1.0f, -1e8f, 1.0f}), ReduceOp::sum, Algorithm::xla_cpu),
      1.0);
}

TEST(FoldReduceEdgeCases, E2NegativeZeros) {
  const auto zeros = scalars<float>({-0.0f, -0.0f});
  EXPECT_FALSE(std::signbit(reduce_scalar(zeros, ReduceOp::sum, Algorithm::xla_cpu)));
  EXPECT_TRUE(std::signbit(reduce_scalar(zeros, ReduceOp::sum, Algorithm::nccl_ring)));
  // A group of one folds onto +0.0 under XLA:CPU (so -0.0 becomes +0.0) and is a copy in NCCL.
  EXPECT_FALSE(
      std::signbit(reduce_scalar(scalars<float>({-0.0f}), ReduceOp::sum, Algorithm::xla_cpu)));
  EXPECT_TRUE(
      std::signbit(reduce_scalar(scalars<float>({-0.0f}), ReduceOp::sum, Algorithm::nccl_ring)));
}

TEST(FoldReduceEdgeCases, E3Bfloat16SumsInFloat32OnXlaCpu) {
  const float small = std::ldexp(1.0f, -8);
  const auto one_first = scalars<BFloat16>(
      {BFloat16::from_float(1.0f), BFloat16::from_float(small), BFloat16::from_float(small)});
  EXPECT_EQ(reduce_scalar(one_first, ReduceOp::sum, Algorithm::xla_cpu), 1.0078125);
  // Per-step bfloat16 rounding where 1 meets 2^-8 first: 1 + 2^-8 ties to 1.0, twice.
  EXPECT_EQ(reduce_scalar(one_first, ReduceOp::sum, Algorithm::binary_tree), 1.0);
  // NCCL's ring adds x1 + x2 = 2^-7 first (chunk 0 starts at ring index 1), which is exact.
  EXPECT_EQ(reduce_scalar(one_first, ReduceOp::sum, Algorithm::nccl_ring), 1.0078125);
  const auto one_second = scalars<BFloat16>(
      {BFloat16::from_float(small), BFloat16::from_float(1.0f), BFloat16::from_float(small)});
  EXPECT_EQ(reduce_scalar(one_second, ReduceOp::sum, Algorithm::nccl_ring), 1.0);
  EXPECT_EQ(reduce_scalar(one_second, ReduceOp::sum, Algorithm::xla_cpu), 1.0078125);
}

TEST(FoldReduceEdgeCases, E4Float16RoundsEveryStep) {
  const float small = std::ldexp(1.0f, -11);
  const auto inputs = scalars<Float16>(
      {Float16::from_float(1.0f), Float16::from_float(small), Float16::from_float(small)});
  EXPECT_EQ(reduce_scalar(inputs, ReduceOp::sum, Algorithm::xla_cpu), 1.0);
}

TEST(FoldReduceEdgeCases, E5Int8Wraps) {
  for (Algorithm algorithm : kAllReductionAlgorithms) {
    EXPECT_EQ(reduce_scalar(scalars<std::int8_t>({100, 100}), ReduceOp::sum, algorithm), -56);
  }
}

TEST(FoldReduceEdgeCases, E7MaxAndMinDropNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto mixed = scalars<float>({nan, 1.0f});
  EXPECT_EQ(reduce_scalar(mixed, ReduceOp::max, Algorithm::xla_cpu), 1.0);
  EXPECT_EQ(reduce_scalar(mixed, ReduceOp::min, Algorithm::xla_cpu), 1.0);
  const auto all_nan = scalars<float>({nan, nan});
  EXPECT_EQ(reduce_scalar(all_nan, ReduceOp::max, Algorithm::xla_cpu),
            -std::numeric_limits<double>::infinity());
  EXPECT_EQ(reduce_scalar(all_nan, ReduceOp::min, Algorithm::xla_cpu),
            std::numeric_limits<double>::infinity());
  // bfloat16 max / min are exact (no float32 promotion involved).
  const auto halves = scalars<BFloat16>({BFloat16::from_float(nan), BFloat16::from_float(3.0f)});
  EXPECT_EQ(reduce_scalar(halves, ReduceOp::max, Algorithm::xla_cpu), 3.0);
}

TEST(FoldReduceEdgeCases, E8BoolMaxIsOrAndMinIsAnd) {
  const auto inputs = scalars<bool>({true, false, false, false});
  for (Algorithm algorithm : kAllReductionAlgorithms) {
    EXPECT_EQ(reduce_scalar(inputs, ReduceOp::max, algorithm), 1.0);
    EXPECT_EQ(reduce_scalar(inputs, ReduceOp::min, algorithm), 0.0);
  }
}

// The ring of a group is the order the device ring visits the group's devices, whatever devices
// the ring misses or the group lacks.
RC_GTEST_PROP(RingOrders, a_groups_ring_follows_the_device_ring, ()) {
  const int devices = *rc::gen::inRange(1, 40);
  std::vector<int> ring = *testkit::permutation(devices);
  ring.resize(static_cast<std::size_t>(*rc::gen::inRange(0, devices + 1)));
  std::vector<int> group = *testkit::permutation(devices);
  group.resize(static_cast<std::size_t>(*rc::gen::inRange(0, devices + 1)));
  std::vector<int> expected;
  for (int device : ring) {
    const auto member = std::find(group.begin(), group.end(), device);
    if (member != group.end()) expected.push_back(static_cast<int>(member - group.begin()));
  }
  RC_ASSERT(DeviceRing(ring).group_ring(group) == expected);
  RC_ASSERT(group_ring(ring, group) == expected);
}

}  // namespace
}  // namespace spmd
