#include "tools/sim_backend.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <string_view>
#include <vector>

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

// "a, b or c".
std::string one_of(const std::vector<std::string_view>& names) {
  if (names.size() < 2) return fmt::format("{}", fmt::join(names, ""));
  return fmt::format("{} or {}", fmt::join(names.begin(), names.end() - 1, ", "), names.back());
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
  if (const auto algorithm = collectives::algorithm_folding_as(order.algorithm)) return *algorithm;
  std::vector<std::string_view> simulated;
  for (ReductionAlgorithm candidate : kAllReductionAlgorithms) {
    if (collectives::algorithm_folding_as(candidate)) {
      simulated.push_back(reduction_algorithm_name(candidate));
    }
  }
  throw Error(fmt::format("--order {} has no simulator algorithm, expected {}",
                          reduction_algorithm_name(order.algorithm), one_of(simulated)));
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
                  collectives::algorithm_name(algorithm), one_of(with_order)));
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
