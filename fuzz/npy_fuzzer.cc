// libFuzzer harness for the .npy reader (reference/npy.h): any bytes either parse or are
// rejected with spmd::Error; anything else (another exception, a crash, a sanitizer report)
// is a bug. A file that parses must serialize and parse back to the same dtype and shape.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "reference/error.h"
#include "reference/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    const spmd::Array array = spmd::parse_npy(bytes, "fuzz.npy", std::nullopt);
    const std::vector<std::byte> again = spmd::serialize_npy(array);
    const spmd::Array reread = spmd::parse_npy(again, "fuzz-again.npy", std::nullopt);
    if (reread.dtype() != array.dtype() || reread.shape() != array.shape()) std::abort();
  } catch (const spmd::Error&) {
    // Rejected with a clear error: the expected outcome for malformed input.
  }
  return 0;
}
