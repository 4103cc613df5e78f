// libFuzzer harness for `spmdsim validate` (cli/validate_command.h, docs/validation.md): any
// calibration file or file of published training runs is either read, every row predicted or
// listed as not predicted, and the summary printed, or rejected with spmd::Error; anything else
// is a bug.
#include <cstddef>
#include <cstdint>
#include <ostream>

#include "cli/validate_command.h"
#include "fuzz/fuzz_input_file.h"
#include "reference/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = spmd::fuzz::write_fuzz_input(data, size, "calibration.csv");
  std::ostream discard(nullptr);  // every write fails quietly
  try {
    spmd::ValidateOptions options;
    options.file = path;
    spmd::run_validate_command(options, discard, discard);
  } catch (const spmd::Error&) {
    // Rejected with a clear error: the expected outcome for malformed input.
  }
  return 0;
}
