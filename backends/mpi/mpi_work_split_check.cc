// Under mpirun: every rank takes its share of N items, writes their indices, and rank 0 checks
// that the gathered shares are 0..N-1 in order, for several N (fewer items than ranks too).
// Prints "<checks> passed, 0 failed" on rank 0 (the test's pass pattern), or each failure.

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backends/mpi/mpi_work_split.h"

namespace {

std::string share_of(const spmd::mpi::RankShare& share, std::int64_t items) {
  std::string text;
  for (std::int64_t i = share.begin(items); i < share.end(items); ++i) text += fmt::format("{},", i);
  return text;
}

}  // namespace

int main() {
  const spmd::mpi::WorkSplit split;
  int passed = 0;
  int failed = 0;
  for (const std::int64_t items : {0, 1, 3, 7, 1000}) {
    const std::vector<std::string> parts =
        split.gather_on_rank_zero(share_of(split.share(), items));
    if (split.share().rank != 0) continue;
    std::string gathered, expected;
    for (const std::string& part : parts) gathered += part;
    for (std::int64_t i = 0; i < items; ++i) expected += fmt::format("{},", i);
    if (gathered == expected && static_cast<int>(parts.size()) == split.share().ranks) {
      ++passed;
    } else {
      ++failed;
      fmt::print("FAIL: {} items over {} ranks gathered '{}'\n", items, split.share().ranks,
                 gathered.substr(0, 80));
    }
  }
  if (split.share().rank == 0) fmt::print("{} passed, {} failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
