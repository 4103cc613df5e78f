#include "backends/differential/differential_case.h"

#include <fmt/format.h>

#include "backends/differential/differential_data.h"
#include "reference/collective_semantics.h"
#include "reference/mesh.h"

namespace spmd::differential {

std::string case_label(const std::string& collective, DType dtype, std::int64_t count) {
  return fmt::format("{} {} x{}", collective, dtype_name(dtype), count);
}

std::vector<Array> reference_results(const CollectiveCall& call,
                                     const std::vector<Array>& contributions,
                                     const ReductionOrder& order) {
  const Mesh mesh({static_cast<int>(contributions.size())}, {"i"});
  validate_collective(call, mesh, contributions.front(), /*check_vma=*/false);
  return evaluate_collective(call, mesh, contributions, order);
}

std::string first_rank_difference(const std::vector<Array>& results,
                                  const std::vector<Array>& expected) {
  if (results.size() != expected.size()) {
    return fmt::format("{} results for {} ranks", results.size(), expected.size());
  }
  for (std::size_t r = 0; r < results.size(); ++r) {
    const std::string difference = bitwise_difference(results[r], expected[r]);
    if (!difference.empty()) return fmt::format("rank {}: {}", r, difference);
  }
  return "";
}

}  // namespace spmd::differential
