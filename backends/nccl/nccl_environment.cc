#include "backends/nccl/nccl_environment.h"

#include <cstdlib>

#include "reference/error.h"

namespace spmd::nccl {

std::vector<std::pair<std::string, std::string>> pinned_ring_environment(
    const std::string& debug_file) {
  return {
      {"NCCL_ALGO", "Ring"},
      {"NCCL_PROTO", "Simple"},
      {"NCCL_MIN_NCHANNELS", "1"},  // deprecated since 2.17, still honoured
      {"NCCL_MAX_NCHANNELS", "1"},
      {"NCCL_MIN_CTAS", "1"},  // the current names
      {"NCCL_MAX_CTAS", "1"},
      {"NCCL_NVLS_ENABLE", "0"},
      {"NCCL_COLLNET_ENABLE", "0"},
      {"NCCL_BUFFSIZE", "4194304"},  // Simple chunk = 4 MiB / 8 steps * 4 = 2 MiB
      {"NCCL_DEBUG", "INFO"},
      {"NCCL_DEBUG_SUBSYS", "INIT,TUNING"},  // INIT prints the rings, TUNING the chosen algorithm
      {"NCCL_DEBUG_FILE", debug_file},
  };
}

void pin_ring_environment(const std::string& debug_file) {
  for (const auto& [name, value] : pinned_ring_environment(debug_file)) {
    if (setenv(name.c_str(), value.c_str(), 1) != 0) {
      throw Error("setenv " + name + "=" + value + ": failed, expected the variable set");
    }
  }
}

}  // namespace spmd::nccl
