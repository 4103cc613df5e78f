#include "backends/sim_backend.h"

#include <fmt/format.h>

#include <string_view>
#include <vector>

#include "reference/error.h"
#include "sim/machine.h"
#include "support/name_lists.h"

namespace spmd {
namespace {

using collectives::Algorithm;

}  // namespace

Algorithm algorithm_for_order(const ReductionOrder& order) {
  // A switch's order is unknown; the ring folds as the reference folds in_switch (as nccl_ring),
  // and conformance checks in_switch only where every order gives the same bits.
  if (order_is_unspecified(order.algorithm)) return Algorithm::ring;
  if (const auto algorithm = collectives::algorithm_folding_as(order.algorithm)) return *algorithm;
  std::vector<std::string_view> simulated;
  for (ReductionAlgorithm candidate : kAllReductionAlgorithms) {
    if (collectives::algorithm_folding_as(candidate) || order_is_unspecified(candidate)) {
      simulated.push_back(reduction_algorithm_name(candidate));
    }
  }
  throw Error(fmt::format("--order {} has no simulator algorithm, expected {}",
                          reduction_algorithm_name(order.algorithm), or_list(simulated)));
}

ReductionOrder order_for_algorithm(Algorithm algorithm) {
  if (const auto order = collectives::reduction_algorithm_of(algorithm)) {
    return {.algorithm = *order};
  }
  std::vector<std::string_view> with_order;
  for (Algorithm candidate : collectives::all_algorithms()) {
    if (collectives::reduction_algorithm_of(candidate)) {
      with_order.push_back(collectives::algorithm_name(candidate));
    }
  }
  throw Error(
      fmt::format("--algorithm {}: the conformance runner cannot give the reference each "
                  "group's grid, expected {}",
                  collectives::algorithm_name(algorithm), or_list(with_order)));
}

std::unique_ptr<Backend> make_sim_backend(const ReductionOrder& order, int device_count,
                                          const std::string& topology) {
  if (!order.ring.empty()) {
    throw Error(
        "--ring with --backend sim: the simulator's rings follow group rank order, "
        "expected no --ring");
  }
  sim::MachineSpec spec;
  spec.name = "conform";
  spec.devices = device_count;
  spec.topology = topology::topology_from_text(topology, device_count);
  sim::SimOptions options;
  options.algorithm = algorithm_for_order(order);
  options.ring_by_rank = true;
  options.numerics = order.numerics();
  return std::make_unique<sim::Machine>(spec, options);
}

}  // namespace spmd
