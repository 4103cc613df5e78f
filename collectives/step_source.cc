#include "collectives/step_source.h"

#include <algorithm>

namespace spmd::collectives {

std::int64_t received_walk(const StepSource& source) {
  std::vector<std::int64_t> received(static_cast<std::size_t>(source.ranks()), 0);
  std::vector<int> touched;
  std::vector<Transfer> step;
  std::int64_t most = 0;
  for (std::size_t i = 0; i < source.raw_step_count(); ++i) {
    source.raw_step(i, step);
    for (const Transfer& t : step) {
      if (t.source == t.destination) continue;
      std::int64_t& r = received[static_cast<std::size_t>(t.destination)];
      if (r == 0) touched.push_back(t.destination);
      r += t.elements();
      most = std::max(most, r);
    }
    // Clears only what this step touched: a step of a tree touches few of the ranks.
    for (int rank : touched) received[static_cast<std::size_t>(rank)] = 0;
    touched.clear();
  }
  return most;
}

std::vector<Step> materialize_steps(const StepSource& source) {
  std::vector<Step> steps;
  std::vector<Transfer> transfers;
  for (std::size_t i = 0; i < source.raw_step_count(); ++i) {
    source.raw_step(i, transfers);
    if (!transfers.empty()) steps.push_back(Step{transfers});
  }
  return steps;
}

}  // namespace spmd::collectives
