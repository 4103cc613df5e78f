// libFuzzer harness for the conformance case reader and runner (conformance/conformance_case.h,
// conformance_runner.h, docs/conformance-format.md): any case file is either loaded or rejected
// with spmd::Error, and a loaded case of up to kMostDevices devices runs on the reference to a
// pass, a failure or an spmd::Error; anything else is a bug. The public cases' .npy files are
// linked beside the input, so that the seeds (the public cases) load and mutations reach the
// runner; the .npy reader has a harness of its own (npy_fuzzer.cc).
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "conformance/conformance_case.h"
#include "conformance/conformance_runner.h"
#include "fuzz/fuzz_input_file.h"
#include "reference/error.h"

namespace {

// The reference runs a thread per device: larger meshes would measure thread start-up.
constexpr int kMostDevices = 16;

// Links every public case's .npy file into the folder of `case_path` (once).
void link_public_arrays(const std::filesystem::path& case_path) {
  namespace fs = std::filesystem;
  for (const auto& entry : fs::directory_iterator(SPMD_CONFORMANCE_DIR)) {
    if (entry.path().extension() != ".npy") continue;
    const fs::path link = case_path.parent_path() / entry.path().filename();
    std::error_code ignored;  // already linked
    fs::create_symlink(entry.path(), link, ignored);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = spmd::fuzz::write_fuzz_input(data, size, "case.json");
  static const bool linked = (link_public_arrays(path), true);
  (void)linked;
  try {
    const spmd::conformance::Case c = spmd::conformance::load_case(path);
    if (c.device_count <= kMostDevices) spmd::conformance::run_case(c, {.backend = "reference"});
  } catch (const spmd::Error&) {
    // Rejected with a clear error: the expected outcome for malformed input.
  }
  return 0;
}
