// libFuzzer harness for the unit parser (support/units.h): every parser either returns a value
// in its documented range or throws spmd::Error; anything else is a bug. A parsed value must
// read back exactly from its exact_*_text form.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "reference/error.h"
#include "support/units.h"

namespace {

template <typename Parse, typename Check>
void try_parse(Parse parse, Check check) {
  try {
    check(parse());
  } catch (const spmd::Error&) {
    // Rejected with a clear error: the expected outcome for malformed input.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try_parse([&] { return spmd::parse_bytes(text, "fuzz"); }, [](std::int64_t bytes) {
    if (bytes < 0 || spmd::parse_bytes(spmd::exact_bytes_text(bytes), "again") != bytes) std::abort();
    (void)spmd::format_bytes(bytes);
  });
  try_parse([&] { return spmd::parse_bandwidth_bytes_per_s(text, "fuzz"); }, [](std::int64_t rate) {
    if (rate <= 0 ||
        spmd::parse_bandwidth_bytes_per_s(spmd::exact_bandwidth_text(rate), "again") != rate) {
      std::abort();
    }
  });
  try_parse([&] { return spmd::parse_duration_ps(text, "fuzz"); }, [](std::int64_t ps) {
    if (ps < 0 || spmd::parse_duration_ps(spmd::exact_duration_text(ps), "again") != ps) std::abort();
    (void)spmd::format_duration_ps(ps);
  });
  try_parse([&] { return spmd::parse_flops(text, "fuzz"); }, [](double flops) {
    if (!(flops > 0) || spmd::parse_flops(spmd::exact_flops_text(flops), "again") != flops) std::abort();
  });
  return 0;
}
