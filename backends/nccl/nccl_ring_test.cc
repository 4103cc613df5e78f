// NCCL's ring all-reduce against the reference's nccl_ring order, NCCL pinned to Ring / Simple /
// one channel (nccl_environment.h). One rank per GPU (NCCL 2.28 allows no more): with 1 GPU the
// order cannot be distinguished and the sum of one rank must be its input; with 2, a + b == b + a
// and the sum must equal the reference's in any order; from 3 GPUs on, the bits must equal the
// reference folding in NCCL's ring order, read from NCCL's INFO log. GPU tests skip, naming what
// is missing, without a GPU. The log parser's tests run anywhere.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cuda/cuda_device.h"
#include "backends/nccl/nccl_ranks.h"
#include "backends/nccl/nccl_environment.h"
#include "backends/nccl/nccl_ring_log.h"
#include "reference/array_difference.h"
#include "reference/fold_reduce.h"
#include "tests/generators.h"

namespace spmd::nccl {
namespace {

std::string debug_file() { return fmt::format("/tmp/spmd_nccl_ring_test.{}.log", getpid()); }

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Element counts: odd, not divisible by the ranks, over 1 Mi, and over 2 MiB chunks per rank for
// 8 ranks of float32 (full loops of the Simple protocol, then a partial one).
constexpr std::int64_t kCounts[] = {1, 7, 1001, (std::int64_t{1} << 20) + 3, 8 * 524288 + 4099};
constexpr DType kDTypes[] = {DType::float32, DType::float16, DType::bfloat16, DType::int32};

class NcclRingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pin_ring_environment(debug_file()); }  // before any NCCL call

  void SetUp() override {
    if (auto reason = cuda::missing_cuda_device()) GTEST_SKIP() << *reason;
    gpus_ = cuda::cuda_device_count();
    std::cout << "NCCL " << nccl_version() << ", " << gpus_ << " GPU(s), one rank each\n";
  }

  // NCCL's results on random data of every dtype and count, each rank's compared with
  // expected(inputs).
  template <class Expected>
  void expect_every_rank(NcclRanks& ranks, Expected expected, const std::string& against) {
    std::uint64_t seed = 1;
    for (DType dtype : kDTypes) {
      for (std::int64_t count : kCounts) {
        const std::vector<Array> inputs =
            random_per_device(dtype, {count}, ranks.ranks(), seed++);
        const std::vector<Array> results = ranks.all_reduce_sum(inputs);
        const Array want = expected(inputs);
        for (std::size_t r = 0; r < results.size(); ++r) {
          const auto difference = first_difference(results[r], want);
          EXPECT_FALSE(difference.has_value())
              << dtype_name(dtype) << "[" << count << "] rank " << r << " against " << against
              << ": " << *difference;
        }
      }
    }
  }

  int gpus_ = 0;
};

TEST_F(NcclRingTest, nccl_ring_all_reduce_matches_reference_nccl_ring_order) {
  NcclRanks ranks(gpus_);
  if (gpus_ == 1) {
    std::cout << "a single rank: the order cannot be distinguished; checking sum == input\n";
    expect_every_rank(
        ranks, [](const std::vector<Array>& inputs) { return inputs[0]; }, "the input");
    return;
  }
  ReductionOrder order{.algorithm = ReductionAlgorithm::nccl_ring};
  if (gpus_ == 2) {
    std::cout << "two ranks: a + b == b + a, the order cannot be distinguished; checking the "
                 "order-insensitive sum\n";
  } else {
    order.ring = ring_from_nccl_log(read_file(debug_file()), gpus_);
    std::cout << "NCCL's ring from " << debug_file() << ": " << order.describe() << "\n";
  }
  expect_every_rank(
      ranks,
      [&order](const std::vector<Array>& inputs) {
        return all_reduce(inputs, ReduceOp::sum, order);
      },
      order.describe());
}

// ---- The log parser (no GPU needed)

TEST(NcclRingLog, ring_is_read_from_the_last_channel_zero_line_of_the_right_size) {
  const std::string log =
      "h:1:1 [0] NCCL INFO Channel 00/01 :    0   1\n"
      "h:1:1 [0] NCCL INFO Channel 00/01 :    0   2   1   3\n"
      "h:1:1 [0] NCCL INFO Channel 01/02 :    0   1   2   3\n"
      "h:1:1 [0] NCCL INFO Channel 00/01 :    0   3   2   1\n"
      "h:1:1 [0] NCCL INFO Connected all rings\n";
  EXPECT_EQ(ring_from_nccl_log(log, 4), (std::vector<int>{0, 3, 2, 1}));
  EXPECT_EQ(ring_from_nccl_log(log, 2), (std::vector<int>{0, 1}));
}

TEST(NcclRingLog, missing_ring_is_an_error_naming_the_setting) {
  try {
    ring_from_nccl_log("h:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n", 3);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "NCCL log: no 'NCCL INFO Channel 00/..' line with 3 ranks, expected one (run "
                 "with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT)");
  }
}

TEST(NcclRingLog, ring_that_is_not_a_permutation_is_an_error) {
  try {
    ring_from_nccl_log("x NCCL INFO Channel 00/01 :    0   1   1", 3);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "NCCL log: 'x NCCL INFO Channel 00/01 :    0   1   1': expected a "
                 "permutation of 0..2");
  }
}

TEST(NcclEnvironment, pins_ring_simple_one_channel_without_in_network_reduction) {
  const auto environment = pinned_ring_environment("/tmp/x.log");
  auto value_of = [&](const std::string& name) {
    for (const auto& [n, v] : environment) {
      if (n == name) return v;
    }
    return std::string("(unset)");
  };
  EXPECT_EQ(value_of("NCCL_ALGO"), "Ring");
  EXPECT_EQ(value_of("NCCL_PROTO"), "Simple");
  EXPECT_EQ(value_of("NCCL_MAX_NCHANNELS"), "1");
  EXPECT_EQ(value_of("NCCL_MAX_CTAS"), "1");
  EXPECT_EQ(value_of("NCCL_NVLS_ENABLE"), "0");
  EXPECT_EQ(value_of("NCCL_COLLNET_ENABLE"), "0");
  EXPECT_EQ(value_of("NCCL_BUFFSIZE"), "4194304");
  EXPECT_EQ(value_of("NCCL_DEBUG_FILE"), "/tmp/x.log");
}

}  // namespace
}  // namespace spmd::nccl
