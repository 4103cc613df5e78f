#include "backends/sim_backend.h"

#include <cmath>

#include "reference/error.h"
#include "sim/machine.h"

namespace spmd {
namespace {

using collectives::Algorithm;

std::vector<int> parse_dims(const std::string& text, const std::string& field) {
  std::vector<int> dims;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t x = text.find('x', start);
    const std::string part = text.substr(start, x == std::string::npos ? x : x - start);
    try {
      std::size_t used = 0;
      const int value = std::stoi(part, &used);
      if (used != part.size() || value < 1) throw std::invalid_argument(part);
      dims.push_back(value);
    } catch (const std::exception&) {
      throw Error(field + ": '" + text + "', expected sizes like 4x2 or 2x2x2");
    }
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return dims;
}

// The factor pair a x b = n with a <= b and a as large as possible.
std::vector<int> near_square(int n) {
  int a = static_cast<int>(std::sqrt(static_cast<double>(n)));
  while (a > 1 && n % a != 0) --a;
  return {a, n / a};
}

}  // namespace

sim::TopologySpec topology_from_text(const std::string& text, int devices) {
  const std::size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string argument = colon == std::string::npos ? "" : text.substr(colon + 1);
  sim::TopologySpec spec;
  spec.devices = devices;
  if (kind == "ring" || kind == "ring-uni") {
    spec.kind = "ring";
    spec.bidirectional = kind == "ring";
  } else if (kind == "torus" || kind == "mesh") {
    spec.kind = kind;
    spec.dims = argument.empty() ? near_square(devices) : parse_dims(argument, "--topology");
    spec.dim_links.assign(spec.dims.size(), topology::LinkSpec{});
  } else if (kind == "fully_connected" || kind == "switch") {
    spec.kind = kind;
  } else if (kind == "hierarchical") {
    spec.kind = kind;
    const std::vector<int> per_node = parse_dims(argument.empty() ? "0" : argument, "--topology");
    spec.devices_per_node = per_node.front();
    if (per_node.size() != 1 || devices % spec.devices_per_node != 0) {
      throw Error("--topology: '" + text + "' for " + std::to_string(devices) +
                  " devices, expected hierarchical:K with K dividing the device count");
    }
  } else {
    throw Error("--topology: '" + text +
                "', expected ring, ring-uni, torus[:AxB[xC]], mesh[:AxB[xC]], fully_connected, "
                "switch or hierarchical:K");
  }
  return spec;
}

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
  spec.topology = topology_from_text(topology, device_count);
  sim::SimOptions options;
  options.algorithm = algorithm_for_order(order);
  options.ring_by_rank = true;
  return std::make_unique<sim::Machine>(spec, options);
}

}  // namespace spmd
