#include "backends/nccl/nccl_ring_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "reference/error.h"

namespace spmd::nccl {
namespace {

constexpr std::string_view kChannelZero = "NCCL INFO Channel 00/";

// The numbers after " : " on a channel line, or nothing when the line has a different count.
std::vector<int> ring_numbers(std::string_view line) {
  const std::size_t colon = line.find(" :", line.find(kChannelZero));
  if (colon == std::string_view::npos) return {};
  std::istringstream numbers{std::string(line.substr(colon + 2))};
  std::vector<int> ring;
  for (int rank; numbers >> rank;) ring.push_back(rank);
  return ring;
}

bool is_permutation_of_ranks(std::vector<int> ring) {
  std::sort(ring.begin(), ring.end());
  for (std::size_t i = 0; i < ring.size(); ++i) {
    if (ring[i] != static_cast<int>(i)) return false;
  }
  return true;
}

}  // namespace

std::vector<int> ring_from_nccl_log(std::string_view log_text, int ranks) {
  std::string_view found;
  std::vector<int> ring;
  std::size_t start = 0;
  while (start < log_text.size()) {
    std::size_t end = log_text.find('\n', start);
    if (end == std::string_view::npos) end = log_text.size();
    const std::string_view line = log_text.substr(start, end - start);
    if (line.find(kChannelZero) != std::string_view::npos) {
      std::vector<int> numbers = ring_numbers(line);
      if (static_cast<int>(numbers.size()) == ranks) found = line, ring = std::move(numbers);
    }
    start = end + 1;
  }
  if (found.empty()) {
    throw Error(
        fmt::format("NCCL log: no 'NCCL INFO Channel 00/..' line with {} ranks, expected "
                    "one (run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT)",
                    ranks));
  }
  if (!is_permutation_of_ranks(ring)) {
    throw Error(fmt::format("NCCL log: '{}': expected a permutation of 0..{}", found, ranks - 1));
  }
  return ring;
}

}  // namespace spmd::nccl
