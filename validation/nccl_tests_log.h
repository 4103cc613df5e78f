#pragma once
// An nccl-tests or rccl-tests output, as `all_reduce_perf` prints it, read for what a simulated
// run needs to stand beside it (`spmdsim perf --compare`): each size it measured with its
// out-of-place time, and what the output says of the run: which test ran (its binary's name,
// "all_reduce_perf"), on how many ranks and hosts (the "#  Rank N ... on HOST device D" lines),
// and how it launched (the header's nGpus, nccl-tests' -g, and graph, its -G). Lines that are
// none of these (NCCL's INFO lines, warnings, the closing averages) are passed over, and so is
// the "N: " label `srun -l` puts before each line.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spmd {

struct NcclTestsResult {
  int line = 0;  // 1-based, for messages
  std::int64_t size_bytes = 0;
  std::string type;    // nccl-tests' name of the element type: float, half, bfloat16, ...
  double time_us = 0;  // out of place
};

struct NcclTestsLog {
  // The tests named in the output ("all_reduce", "alltoall", ...: nccl-tests' names without
  // "_perf"), in the order they first appear.
  std::vector<std::string> tests;
  std::optional<int> ranks;  // the "Rank" lines, when the output has them
  std::optional<int> hosts;
  std::optional<int> gpus_per_process;  // nGpus
  std::optional<bool> graph_launch;     // graph: 0 or 1
  std::vector<NcclTestsResult> results;
};

// spmd::Error naming `name`, the line and what was expected for a results table it cannot read,
// a second table (one test's output per file), or an output without results.
NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& name);
NcclTestsLog read_nccl_tests_log(const std::string& path);

// perf's op for an nccl-tests test (all_reduce, all_gather, reduce_scatter, broadcast,
// all_to_all for alltoall, ppermute for sendrecv); none for the tests perf does not time.
std::optional<std::string> perf_op_of_nccl_test(std::string_view test);

// The perf op an output measured: its one test's, or `op` (perf's name; empty when none was
// given) where it names no test or several. spmd::Error starting with `source` (how the caller
// names the output: "--compare FILE", "FILE") when it cannot tell, when its test is one perf does
// not time, or when `op` is another than its test's.
std::string op_of_output(const NcclTestsLog& log, const std::string& source, const std::string& op);

}  // namespace spmd
