// libFuzzer harness for the conformance case reader (conformance/conformance_case.h,
// docs/conformance-format.md): any case file is either loaded or rejected with spmd::Error;
// anything else is a bug. The .npy files a case names are looked up next to the input, where
// there are none: the .npy reader has a harness of its own (npy_fuzzer.cc).
#include <cstddef>
#include <cstdint>

#include "conformance/conformance_case.h"
#include "fuzz/fuzz_input_file.h"
#include "reference/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = spmd::fuzz::write_fuzz_input(data, size, "case.json");
  try {
    spmd::conformance::load_case(path);
  } catch (const spmd::Error&) {
    // Rejected with a clear error: the expected outcome for malformed input.
  }
  return 0;
}
