// Reading an nccl-tests or rccl-tests output (validation/nccl_tests_log.h): each size with its
// out-of-place time, and what the output says of the run (test, ranks, hosts, -g, -G), from
// outputs as the tools print them; and one-line errors naming the line for what it cannot read.

#include "validation/nccl_tests_log.h"

#include <gtest/gtest.h>

#include "tests/error_of.h"

namespace spmd {
namespace {

using test_errors::error_of;

// Two hosts of two GPUs, as `srun -l` labels each line, with CRLF line ends and NCCL's own lines
// between the tool's.
constexpr std::string_view kTwoHostOutput =
    "+ srun -l all_reduce_perf -b 8 -e 16 -f 2 -g 1\r\n"
    "0: # nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 "
    "agg iters: 1 validation: 1 graph: 0\r\n"
    "0: #\r\n"
    "0: # Using devices\r\n"
    "0: #  Rank  0 Group  0 Pid  101 on  node-a device  0 [0x01] NVIDIA GH200 120GB\r\n"
    "0: #  Rank  1 Group  0 Pid  102 on  node-a device  1 [0x02] NVIDIA GH200 120GB\r\n"
    "0: #  Rank  2 Group  0 Pid  201 on  node-b device  0 [0x01] NVIDIA GH200 120GB\r\n"
    "0: #  Rank  3 Group  0 Pid  202 on  node-b device  1 [0x02] NVIDIA GH200 120GB\r\n"
    "0: node-a:101:101 [0] NCCL INFO NCCL version 2.23.4+cuda12.6\r\n"
    "0: #                                                              out-of-place          "
    "             in-place\r\n"
    "0: #       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\r\n"
    "0: #        (B)    (elements)                               (us)  (GB/s)  (GB/s)          "
    "  (us)  (GB/s)  (GB/s)\r\n"
    "0:            8             2     float     sum      -1    18.74    0.00    0.00      0    "
    "18.69    0.00    0.00      0\r\n"
    "0:           16             4     float     sum      -1    18.67    0.00    0.00      0    "
    "18.55    0.00    0.00      0\r\n"
    "0: # Out of bounds values : 0 OK\r\n"
    "0: # Avg bus bandwidth    : 0.001\r\n";

TEST(NcclTestsLog, ReadsSizesTimesAndTheRun) {
  const NcclTestsLog log = parse_nccl_tests_log(kTwoHostOutput, "out.txt");
  ASSERT_EQ(log.results.size(), 2u);
  EXPECT_EQ(log.results[0].size_bytes, 8);
  EXPECT_DOUBLE_EQ(log.results[0].time_us, 18.74);  // out of place, not 18.69 in place
  EXPECT_EQ(log.results[0].type, "float");
  EXPECT_EQ(log.results[1].size_bytes, 16);
  EXPECT_DOUBLE_EQ(log.results[1].time_us, 18.67);
  EXPECT_EQ(log.results[1].line, 14);
  EXPECT_EQ(log.tests, std::vector<std::string>{"all_reduce"});
  EXPECT_EQ(log.ranks, 4);
  EXPECT_EQ(log.hosts, 2);
  EXPECT_EQ(log.gpus_per_process, 1);
  EXPECT_EQ(log.graph_launch, false);
}

// One process driving 8 GPUs (-g 8) under a graph (-G 1): rccl-tests' rank lines have no Group,
// and a size of 0 (nothing per rank) moves no data, so it is no result.
TEST(NcclTestsLog, ReadsTheLaunchAndRcclTestsRankLines) {
  const NcclTestsLog log = parse_nccl_tests_log(
      "# nThread 1 nGpus 8 minBytes 1024 maxBytes 1024 step: 2(factor) warmup iters: 5 "
      "iters: 20 agg iters: 1 validation: 1 graph: 1\n"
      "#   Rank  0 Pid 3844613 on     gpu-53 device  0 [0000:05:00.0] AMD Instinct MI300X\n"
      "#   Rank  1 Pid 3844613 on     gpu-53 device  1 [0000:25:00.0] AMD Instinct MI300X\n"
      "# Collective test starting: alltoall_perf\n"
      "           0            0     float    none      -1     0.00    0.00    0.00      0    "
      "0.00    0.00    0.00    N/A\n"
      "        1024           32     float    none      -1    25.10    0.04    0.04      0    "
      "24.90    0.04    0.04    N/A\n",
      "a2a.log");
  EXPECT_EQ(log.tests, std::vector<std::string>{"alltoall"});
  EXPECT_EQ(log.ranks, 2);
  EXPECT_EQ(log.hosts, 1);
  EXPECT_EQ(log.gpus_per_process, 8);
  EXPECT_EQ(log.graph_launch, true);
  ASSERT_EQ(log.results.size(), 1u);
  EXPECT_DOUBLE_EQ(log.results[0].time_us, 25.10);
}

// A table alone says nothing of the run; older nccl-tests print no root column, and the header
// says where the time is.
TEST(NcclTestsLog, ATableAloneAndTheOlderLayout) {
  const NcclTestsLog bare = parse_nccl_tests_log(
      "     1048576        262144     float     sum      -1    52.61   19.93   34.88      0    "
      "53.03   19.77   34.60      0\n",
      "bare.txt");
  EXPECT_TRUE(bare.tests.empty());
  EXPECT_FALSE(bare.ranks);
  EXPECT_FALSE(bare.gpus_per_process);
  ASSERT_EQ(bare.results.size(), 1u);
  EXPECT_DOUBLE_EQ(bare.results[0].time_us, 52.61);

  const NcclTestsLog old = parse_nccl_tests_log(
      "#      size    count   type   redop     time  algbw  busbw  error     time  algbw  busbw  "
      "error\n"
      "     1048576   262144  float     sum    60.50  17.33  30.33  1e-06    60.10  17.45  30.53  "
      "1e-06\n",
      "old.txt");
  ASSERT_EQ(old.results.size(), 1u);
  EXPECT_DOUBLE_EQ(old.results[0].time_us, 60.50);
}

TEST(NcclTestsLog, WhatItCannotReadIsAOneLineErrorNamingTheLine) {
  EXPECT_EQ(error_of([] { parse_nccl_tests_log("# nThread 1 nGpus 1\nhello\n", "x.txt"); }),
            "x.txt: no results; expected nccl-tests or rccl-tests output, rows of size, count, "
            "type, redop, root, time (us), algbw and busbw");
  EXPECT_EQ(error_of([] { parse_nccl_tests_log("8 2 float sum -1 fast 0.00 0.00 0\n", "x.txt"); }),
            "x.txt:1: time 'fast': expected a positive number of microseconds");
  EXPECT_EQ(error_of([] { parse_nccl_tests_log("8 2 float sum -1 0.00 0.00 0.00 0\n", "x.txt"); }),
            "x.txt:1: time '0.00': expected a positive number of microseconds");
  EXPECT_EQ(error_of([] {
              parse_nccl_tests_log("99999999999999999999 2 float sum -1 1.0 0.00 0.00 0\n",
                                   "x.txt");
            }),
            "x.txt:1: size '99999999999999999999': expected a number of bytes");
  const std::string header =
      "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n";
  const std::string row = "8 2 float sum -1 10.0 0.00 0.00 0 10.0 0.00 0.00 0\n";
  EXPECT_EQ(error_of([&] { parse_nccl_tests_log(header + row + header + row, "two.txt"); }),
            "two.txt:3: a second results table; expected one test's output");
}

TEST(NcclTestsLog, PerfTimesTheTestsItHasOpsFor) {
  EXPECT_EQ(perf_op_of_nccl_test("all_reduce"), "all_reduce");
  EXPECT_EQ(perf_op_of_nccl_test("all_gather"), "all_gather");
  EXPECT_EQ(perf_op_of_nccl_test("reduce_scatter"), "reduce_scatter");
  EXPECT_EQ(perf_op_of_nccl_test("broadcast"), "broadcast");
  EXPECT_EQ(perf_op_of_nccl_test("alltoall"), "all_to_all");
  EXPECT_EQ(perf_op_of_nccl_test("sendrecv"), "ppermute");
  EXPECT_FALSE(perf_op_of_nccl_test("reduce"));
  EXPECT_FALSE(perf_op_of_nccl_test("gather"));
}

}  // namespace
}  // namespace spmd
