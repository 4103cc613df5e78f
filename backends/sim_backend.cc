#include "backends/sim_backend.h"

#include "reference/error.h"
#include "sim/machine.h"

namespace spmd {
namespace {

using collectives::Algorithm;

}  // namespace

Algorithm algorithm_for_order(const ReductionOrder& order) {
  switch (order.algorithm) {
    case ReductionAlgorithm::xla_cpu: return Algorithm::direct;
    case ReductionAlgorithm::nccl_ring: return Algorithm::ring;
    case ReductionAlgorithm::binary_tree: return Algorithm::binary_tree;
    case ReductionAlgorithm::halving_doubling: return Algorithm::halving_doubling;
    case ReductionAlgorithm::bidirectional_ring: return Algorithm::bidirectional_ring;
    case ReductionAlgorithm::double_binary_tree: return Algorithm::double_binary_tree;
    default: break;
  }
  throw Error("--order " + std::string(reduction_algorithm_name(order.algorithm)) +
              " has no simulator algorithm, expected xla_cpu, nccl_ring, binary_tree, "
              "halving_doubling, bidirectional_ring or double_binary_tree");
}

ReductionOrder order_for_algorithm(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::direct: return {.algorithm = ReductionAlgorithm::xla_cpu};
    case Algorithm::ring: return {.algorithm = ReductionAlgorithm::nccl_ring};
    case Algorithm::binary_tree: return {.algorithm = ReductionAlgorithm::binary_tree};
    case Algorithm::halving_doubling: return {.algorithm = ReductionAlgorithm::halving_doubling};
    case Algorithm::bidirectional_ring:
      return {.algorithm = ReductionAlgorithm::bidirectional_ring};
    case Algorithm::double_binary_tree:
      return {.algorithm = ReductionAlgorithm::double_binary_tree};
    case Algorithm::torus: break;
  }
  throw Error("--algorithm torus: the conformance runner cannot give the reference each group's "
              "grid, expected direct, ring, bidirectional_ring, halving_doubling, binary_tree or "
              "double_binary_tree");
}

std::unique_ptr<Backend> make_sim_backend(const ReductionOrder& order, int device_count,
                                          const std::string& topology) {
  if (!order.ring.empty()) {
    throw Error("--ring with --backend sim: the simulator's rings follow group rank order, "
                "expected no --ring");
  }
  sim::MachineSpec spec;
  spec.name = "conform";
  spec.devices = device_count;
  spec.topology = topology::topology_from_text(topology, device_count);
  sim::SimOptions options;
  options.algorithm = algorithm_for_order(order);
  options.ring_by_rank = true;
  return std::make_unique<sim::Machine>(spec, options);
}

}  // namespace spmd
