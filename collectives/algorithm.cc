#include "collectives/algorithm.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <ranges>

#include "collectives/algorithm_parts.h"
#include "reference/check.h"
#include "reference/error.h"

namespace spmd::collectives {
namespace {

struct Named {
  Algorithm algorithm;
  std::string_view name;
  const AlgorithmParts& (*parts)();
};

constexpr Named kAlgorithms[] = {
    {Algorithm::direct, "direct", direct_parts},
    {Algorithm::ring, "ring", ring_parts},
    {Algorithm::bidirectional_ring, "bidirectional_ring", bidirectional_ring_parts},
    {Algorithm::halving_doubling, "halving_doubling", halving_doubling_parts},
    {Algorithm::binary_tree, "binary_tree", binary_tree_parts},
    {Algorithm::double_binary_tree, "double_binary_tree", double_binary_tree_parts},
    {Algorithm::torus, "torus", torus_parts},
    {Algorithm::bidirectional_torus, "bidirectional_torus", bidirectional_torus_parts},
};

const Named& entry(Algorithm algorithm) {
  for (const Named& named : kAlgorithms) {
    if (named.algorithm == algorithm) return named;
  }
  SPMD_UNREACHABLE(fmt::format("collective algorithm {} is unknown, expected an Algorithm value",
                               static_cast<int>(algorithm)));
}

constexpr std::int64_t kSmallMessageBytes = 256 * 1024;

bool is_power_of_two(int n) { return std::has_single_bit(static_cast<unsigned>(n)); }

}  // namespace

std::string_view algorithm_name(Algorithm algorithm) { return entry(algorithm).name; }

Algorithm algorithm_from_name(std::string_view name) {
  for (const Named& named : kAlgorithms) {
    if (named.name == name) return named.algorithm;
  }
  throw Error(fmt::format("algorithm '{}' is unknown, expected one of: {}", name,
                          fmt::join(kAlgorithms | std::views::transform(&Named::name), ", ")));
}

std::optional<ReductionAlgorithm> reduction_algorithm_of(Algorithm algorithm) {
  return entry(algorithm).parts().reduction_algorithm;
}

std::optional<Algorithm> algorithm_folding_as(ReductionAlgorithm order) {
  for (const Named& named : kAlgorithms) {
    if (named.parts().reduction_algorithm == order) return named.algorithm;
  }
  return std::nullopt;
}

std::vector<Algorithm> all_algorithms() {
  std::vector<Algorithm> algorithms;
  for (const Named& named : kAlgorithms) algorithms.push_back(named.algorithm);
  return algorithms;
}

std::string_view collective_kind_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::all_to_all: return "all_to_all";
    case CollectiveKind::permute: return "permute";
    case CollectiveKind::broadcast: return "broadcast";
  }
  return "unknown";
}

bool supports(Algorithm algorithm, const CollectiveShape& shape) {
  return shape.ranks >= 1 && entry(algorithm).parts().supports(shape);
}

namespace {

void require_support(Algorithm algorithm, const CollectiveShape& shape) {
  if (!supports(algorithm, shape)) {
    throw Error(
        fmt::format("algorithm {} cannot run {} over {} ranks, expected a supported algorithm",
                    algorithm_name(algorithm), collective_kind_name(shape.kind), shape.ranks));
  }
}

}  // namespace

Schedule build_schedule(Algorithm algorithm, const CollectiveShape& shape) {
  require_support(algorithm, shape);
  return entry(algorithm).parts().build(shape);
}

std::shared_ptr<const StepSource> step_source(Algorithm algorithm, const CollectiveShape& shape) {
  require_support(algorithm, shape);
  return entry(algorithm).parts().steps(shape);
}

ReductionOrder reduction_order(Algorithm algorithm, const CollectiveShape& shape) {
  return entry(algorithm).parts().order(shape);
}

std::int64_t closed_form_time_ps(Algorithm algorithm, const CollectiveShape& shape,
                                 std::int64_t latency_ps, std::int64_t bandwidth_bytes_per_s) {
  return entry(algorithm).parts().time_ps(shape, latency_ps, bandwidth_bytes_per_s);
}

std::vector<std::vector<RankPair>> link_phases(Algorithm algorithm,
                                               const CollectiveShape& shape) {
  const AlgorithmParts& parts = entry(algorithm).parts();
  if (parts.link_phases == nullptr || !supports(algorithm, shape)) return {};
  return parts.link_phases(shape);
}

std::int64_t phased_closed_form_time_ps(Algorithm algorithm, const CollectiveShape& shape,
                                        std::span<const cost_model::RouteCost> per_phase) {
  const AlgorithmParts& parts = entry(algorithm).parts();
  // Not link_phases(...).size(): building the phases again is O(ranks) on every fast-path group;
  // the torus checks its own count (one per dimension); the others have one phase.
  SPMD_CHECK(!per_phase.empty() && (parts.phased_time_ps != nullptr || per_phase.size() == 1),
             fmt::format("{} link costs for {} over {} ranks, expected one per phase",
                         per_phase.size(), algorithm_name(algorithm), shape.ranks));
  if (parts.phased_time_ps != nullptr) return parts.phased_time_ps(shape, per_phase);
  return parts.time_ps(shape, per_phase[0].latency_ps, per_phase[0].bandwidth_bytes_per_s);
}

namespace {

// A large all-reduce, reduce-scatter or all-gather over a grid of two or more dimensions: the
// bidirectional torus where the grid's lines close into rings of links (with wrap-around every
// hop of both directions is one link of its own), else the torus; the ring where neither runs.
Algorithm large_message_algorithm(const CollectiveShape& shape,
                                  const topology::TopologyTraits& topology) {
  if (topology.grid && shape.torus_dims.size() >= 2) {
    for (Algorithm a : {Algorithm::bidirectional_torus, Algorithm::torus}) {
      const bool fits_topology = a != Algorithm::bidirectional_torus || topology.wrap_around;
      if (fits_topology && supports(a, shape)) return a;
    }
  }
  return Algorithm::ring;
}

}  // namespace

Algorithm choose_algorithm(const CollectiveShape& shape, const topology::TopologyTraits& topology) {
  // The whole buffer: an all-gather's output, like a reduce-scatter's input, is ranks shards.
  const std::int64_t buffer_elements =
      shape.kind == CollectiveKind::all_gather ? shape.elements * shape.ranks : shape.elements;
  const bool small = buffer_elements * shape.element_bytes < kSmallMessageBytes;
  if (shape.ranks == 1 || shape.kind == CollectiveKind::permute) return Algorithm::direct;
  switch (shape.kind) {
    case CollectiveKind::all_reduce: {
      if (small) {
        return is_power_of_two(shape.ranks) ? Algorithm::halving_doubling
                                            : Algorithm::double_binary_tree;
      }
      return large_message_algorithm(shape, topology);
    }
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather:
      if (small && is_power_of_two(shape.ranks)) return Algorithm::halving_doubling;
      return small ? Algorithm::ring : large_message_algorithm(shape, topology);
    case CollectiveKind::all_to_all: return Algorithm::direct;
    case CollectiveKind::broadcast: return small ? Algorithm::binary_tree : Algorithm::ring;
    case CollectiveKind::permute: break;
  }
  return Algorithm::direct;
}

}  // namespace spmd::collectives
