// libFuzzer harness for the workload reader (workloads/workload.h, docs/workload-format.md):
// any file is either read or rejected with spmd::Error; anything else is a bug.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input_file.h"
#include "reference/error.h"
#include "workloads/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = spmd::fuzz::write_fuzz_input(data, size, "workload.json");
  try {
    spmd::load_workload_file(path);
  } catch (const spmd::Error&) {
    // Rejected with a clear error: the expected outcome for malformed input.
  }
  return 0;
}
