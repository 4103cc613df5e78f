// libFuzzer harness for the nccl-tests output reader (validation/nccl_tests_log.h, what
// `perf --compare` and `calibrate` read): any file is either read or rejected with spmd::Error;
// anything else is a bug. What it reads must hold what perf relies on: results with sizes and
// times above zero, ranks and hosts above zero, no more hosts than ranks' lines name.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "fuzz/fuzz_input_file.h"
#include "reference/error.h"
#include "validation/nccl_tests_log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = spmd::fuzz::write_fuzz_input(data, size, "all_reduce.txt");
  try {
    const spmd::NcclTestsLog log = spmd::read_nccl_tests_log(path);
    if (log.results.empty()) std::abort();
    for (const spmd::NcclTestsResult& result : log.results) {
      if (result.size_bytes <= 0 || !(result.time_us > 0) || !std::isfinite(result.time_us)) {
        std::abort();
      }
    }
    if ((log.ranks && *log.ranks <= 0) || (log.hosts && *log.hosts <= 0)) std::abort();
    if (log.gpus_per_process && *log.gpus_per_process <= 0) std::abort();
  } catch (const spmd::Error&) {
    // Rejected with a clear error: the expected outcome for malformed input.
  }
  return 0;
}
