// What `perf` refuses sizes by (cli/perf_data_memory.h) against what a run with data holds: for
// each op, the peak resident memory of `spmdsim perf` with data, less that of the same run
// without data (--cost-only), lies within the estimate, and not far below it (an estimate that
// far above what a run holds refuses sizes that fit, as the old three buffers a device did for
// all-reduce). Left out of the sanitized run (tools/run-sanitized-tests.sh): the sanitizers'
// allocator and shadow memory change what a process holds.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cli/perf_data_memory.h"

namespace spmd {
namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

// The peak resident bytes of `spmdsim ARGUMENTS` (its output thrown away), which must exit 0.
std::int64_t peak_resident_bytes(const std::vector<std::string>& arguments) {
  std::vector<std::string> words = {SPMDSIM_BINARY};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    const int null_device = open("/dev/null", O_WRONLY);
    dup2(null_device, STDOUT_FILENO);
    dup2(null_device, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  EXPECT_EQ(wait4(child, &status, 0, &usage), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << arguments[2];
  return std::int64_t{usage.ru_maxrss} * 1024;  // Linux reports KiB
}

TEST(PerfDataMemory, EachOpHoldsWhatItsEstimateSays) {
  constexpr std::int64_t kBytes = 32 * kMiB;
  // Allocator rounding and the pages a run touches besides its data.
  constexpr std::int64_t kSlackBytes = 4 * kMiB;
  for (const std::string op : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                               "ppermute"}) {
    for (const int devices : {4, 8}) {
      const std::vector<std::string> run = {
          "perf", "--op", op, "--devices", std::to_string(devices), "--topology", "ring",
          "--link", "100GB/s,1us", "-b", "32M", "-e", "32M"};
      std::vector<std::string> without_data = run;
      without_data.push_back("--cost-only");
      const std::int64_t held = peak_resident_bytes(run) - peak_resident_bytes(without_data);
      const std::int64_t estimate = perf_data_bytes(op, devices, kBytes);
      EXPECT_LE(held, estimate + kSlackBytes) << op << " on " << devices << " devices";
      EXPECT_GE(held, estimate * 85 / 100) << op << " on " << devices << " devices";
    }
  }
}

TEST(PerfDataMemory, BuffersCountPerDeviceAndInAll) {
  EXPECT_EQ(perf_data_bytes("all_reduce", 8, kMiB), kMiB);
  EXPECT_EQ(perf_data_bytes("all_to_all", 8, kMiB), (2 + 4 * 8) * kMiB);
  EXPECT_EQ(perf_data_bytes("broadcast", 8, kMiB), 0);
  EXPECT_EQ(perf_data_bytes("all_to_all", 1 << 30, std::int64_t{1} << 40),
            INT64_MAX);  // saturates: no host holds it
}

}  // namespace
}  // namespace spmd
