#include "sim/fast_path.h"

#include <algorithm>

namespace spmd::sim {
namespace {

// The one route cost every pair of the phase has, if no two pairs share a link; none otherwise.
std::optional<cost_model::RouteCost> uniform_private_cost(
    const std::vector<collectives::RankPair>& pairs, const std::vector<int>& devices,
    LinkState& links) {
  // A phase without messages (a dimension of one rank) costs nothing whatever its links.
  cost_model::RouteCost cost{0, 1};
  std::vector<int> used;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const RouteTiming& route = links.route(devices[static_cast<std::size_t>(pairs[i].first)],
                                           devices[static_cast<std::size_t>(pairs[i].second)]);
    const cost_model::RouteCost pair_cost{route.latency_ps, route.bandwidth_bytes_per_s};
    if (i == 0) cost = pair_cost;
    if (route.links.empty() || pair_cost.latency_ps != cost.latency_ps ||
        pair_cost.bandwidth_bytes_per_s != cost.bandwidth_bytes_per_s) {
      return std::nullopt;
    }
    used.insert(used.end(), route.links.begin(), route.links.end());
  }
  std::sort(used.begin(), used.end());
  if (std::adjacent_find(used.begin(), used.end()) != used.end()) return std::nullopt;
  return cost;
}

}  // namespace

std::optional<std::int64_t> closed_form_time_on_links_ps(const CollectivePlan& plan,
                                                         const std::vector<int>& devices,
                                                         LinkState& links) {
  const std::vector<std::vector<collectives::RankPair>> phases =
      collectives::link_phases(plan.algorithm, plan.shape);
  if (phases.empty()) return std::nullopt;
  std::vector<cost_model::RouteCost> per_phase;
  per_phase.reserve(phases.size());
  for (const auto& pairs : phases) {
    const std::optional<cost_model::RouteCost> cost = uniform_private_cost(pairs, devices, links);
    if (!cost) return std::nullopt;
    per_phase.push_back(*cost);
  }
  return collectives::phased_closed_form_time_ps(plan.algorithm, plan.shape, per_phase);
}

}  // namespace spmd::sim
