#include "sim/library_timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace spmd::sim {
namespace {

std::optional<cost_model::TimedOp> timed_op(CollectiveOp op) {
  using cost_model::TimedOp;
  switch (op) {
    case CollectiveOp::psum:
    case CollectiveOp::pmean:
    case CollectiveOp::pmax:
    case CollectiveOp::pmin: return TimedOp::all_reduce;
    case CollectiveOp::all_gather: return TimedOp::all_gather;
    case CollectiveOp::psum_scatter: return TimedOp::reduce_scatter;
    case CollectiveOp::all_to_all: return TimedOp::all_to_all;
    case CollectiveOp::ppermute:
    case CollectiveOp::pshuffle: return TimedOp::permute;
    case CollectiveOp::axis_index: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

LibraryChoice first_forced(std::initializer_list<LibraryChoice> choices) {
  LibraryChoice forced;
  for (const LibraryChoice& choice : choices) {
    if (!forced.algorithm) forced.algorithm = choice.algorithm;
    if (!forced.protocol) forced.protocol = choice.protocol;
  }
  return forced;
}

int group_ranks_per_node(const MachineSpec& machine, const std::vector<int>& devices) {
  if (!machine.fabric || machine.fabric->devices_per_node < 1) return 0;
  std::map<int, int> ranks_on_node;
  int most = 0;
  for (int device : devices) {
    most = std::max(most, ++ranks_on_node[device / machine.fabric->devices_per_node]);
  }
  return most;
}

std::optional<cost_model::TimedChoice> library_timing(const MachineSpec& machine, CollectiveOp op,
                                                      std::int64_t bytes, int element_bytes,
                                                      GroupSpread group,
                                                      const LibraryChoice& forced) {
  const std::optional<cost_model::TimedOp> timed = timed_op(op);
  // A group of one device moves nothing (XLA drops such a collective): no library call to time.
  if (!machine.fabric || !timed || group.ranks <= 1) return std::nullopt;
  return cost_model::time_collective(*machine.fabric, {.op = *timed,
                                                       .bytes = bytes,
                                                       .ranks = group.ranks,
                                                       .ranks_per_node = group.ranks_per_node,
                                                       .element_bytes = element_bytes,
                                                       .algorithm = forced.algorithm,
                                                       .protocol = forced.protocol});
}

std::string library_note(const cost_model::TimedChoice& choice, CollectiveOp op) {
  using cost_model::LibraryAlgorithm;
  const bool sums = op == CollectiveOp::psum || op == CollectiveOp::pmean ||
                    op == CollectiveOp::psum_scatter;
  const bool in_hardware = cost_model::reduces_in_switches(choice.algorithm) ||
                           choice.algorithm == LibraryAlgorithm::collnet;
  if (!sums || !in_hardware) return choice.fallback;
  const std::string order = fmt::format(
      "{} sums in the switches, in an order the hardware fixes (order unspecified); the results "
      "keep the planned schedule's order",
      cost_model::library_algorithm_name(choice.algorithm));
  return choice.fallback.empty() ? order : choice.fallback + "; " + order;
}

}  // namespace spmd::sim
