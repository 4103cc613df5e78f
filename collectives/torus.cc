// Torus: the group is a row-major grid over shape.torus_dims (last dimension fastest). One pass
// (reference/torus_passes.h) over all the elements: the all-reduce's dimensions are
// reduce-scattered last first, along every line as on a ring towards higher coordinates, then
// all-gathered back, dimension 0 first. A reduce-scatter runs dimension 0 first and an all-gather
// gathers it last (torus_rank_order_passes), so each block is a run of whole shards in rank order.
// All lines of a dimension run together (collectives/torus_schedule.h).

#include "collectives/algorithm_parts.h"
#include "collectives/ring_parts.h"
#include "collectives/torus_schedule.h"

namespace spmd::collectives {
namespace {

std::vector<TorusPass> passes(const CollectiveShape& shape) {
  if (shape.kind == CollectiveKind::all_reduce) {
    return torus_passes(shape.torus_dims, shape.elements);
  }
  return torus_rank_order_passes(shape.torus_dims, torus_work_elements(shape));
}

Schedule build(const CollectiveShape& shape) {
  return build_torus_schedule("torus", shape, passes(shape));
}

std::shared_ptr<const StepSource> steps(const CollectiveShape& shape) {
  return torus_step_source(shape, passes(shape));
}

ReductionOrder order(const CollectiveShape& shape) {
  ReductionOrder torus = ring_chunked_order(ReductionAlgorithm::torus, shape);
  torus.torus_dims = shape.torus_dims;
  return torus;
}

// Dimension j's steps each carry the largest block of that level across dimension j's links,
// once for a reduce-scatter or an all-gather, twice for an all-reduce.
std::int64_t phased_time_ps(const CollectiveShape& shape,
                            std::span<const cost_model::RouteCost> per_dimension) {
  if (!torus_supports(shape)) return 0;
  return torus_passes_time_ps(shape, passes(shape), per_dimension);
}

std::int64_t time_ps(const CollectiveShape& shape, std::int64_t latency_ps,
                     std::int64_t bandwidth_bytes_per_s) {
  const std::vector<cost_model::RouteCost> uniform(shape.torus_dims.size(),
                                                   {latency_ps, bandwidth_bytes_per_s});
  return phased_time_ps(shape, uniform);
}

// One phase per dimension: every rank to the next along it (none for a dimension of size 1).
std::vector<std::vector<RankPair>> link_phases(const CollectiveShape& shape) {
  const TorusGrid grid(shape.torus_dims);
  std::vector<std::vector<RankPair>> phases;
  for (std::size_t j = 0; j < grid.count(); ++j)
    phases.push_back(torus_neighbour_pairs(grid, j, 1));
  return phases;
}

}  // namespace

const AlgorithmParts& torus_parts() {
  static const AlgorithmParts parts{torus_supports, build,        steps,       order,
                                    time_ps,        std::nullopt, link_phases, phased_time_ps};
  return parts;
}

}  // namespace spmd::collectives
