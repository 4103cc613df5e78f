// Bidirectional torus: the elements split evenly into 2D parts over a torus of D dimensions, each
// all-reduced by its own torus pass (reference/torus_passes.h): pass p reduce-scatters dimensions
// p % D, p % D + 1, ... (mod D) in turn, towards higher coordinates for the first D passes and
// lower ones for the others, then all-gathers back in the reverse order. The passes run at once
// in lockstep phases (collectives/torus_schedule.h), so in every phase each dimension's links
// carry one pass each way: TPUs drive both directions of every dimension at once the same way.
// On a dimension of size 2 both directions go to the same neighbour, so its two passes share
// that link; on one dimension this is the bidirectional ring of the torus's blocks. A
// reduce-scatter or an all-gather runs the same passes on pieces of every rank's shard
// (reference/torus_passes.h), so it too drives both directions of every dimension.

#include "collectives/algorithm_parts.h"
#include "collectives/ring_parts.h"
#include "collectives/torus_schedule.h"

namespace spmd::collectives {
namespace {

// A reduce-scatter or an all-gather splits every rank's shard between the passes (piece passes),
// so that each rank ends with, or starts from, its own shard whatever a pass's dimension order.
std::vector<TorusPass> passes(const CollectiveShape& shape) {
  if (shape.kind == CollectiveKind::all_reduce) {
    return bidirectional_torus_passes(shape.torus_dims, shape.elements);
  }
  return bidirectional_torus_piece_passes(shape.torus_dims, torus_work_elements(shape));
}

Schedule build(const CollectiveShape& shape) {
  return build_torus_schedule("bidirectional_torus", shape, passes(shape));
}

std::shared_ptr<const StepSource> steps(const CollectiveShape& shape) {
  return torus_step_source(shape, passes(shape));
}

ReductionOrder order(const CollectiveShape& shape) {
  ReductionOrder torus = ring_chunked_order(ReductionAlgorithm::bidirectional_torus, shape);
  torus.torus_dims = shape.torus_dims;
  return torus;
}

std::int64_t time_ps(const CollectiveShape& shape, std::int64_t latency_ps,
                     std::int64_t bandwidth_bytes_per_s) {
  if (!torus_dims_cover(shape.torus_dims, shape.ranks)) return 0;
  const std::vector<cost_model::RouteCost> uniform(shape.torus_dims.size(),
                                                   {latency_ps, bandwidth_bytes_per_s});
  return torus_passes_time_ps(shape, passes(shape), uniform);
}

// One phase, as every phase of the schedule uses every dimension both ways: each rank to both
// its neighbours along every dimension. On a dimension of size 2 the two are the same pair,
// listed twice, as two passes' messages share it. A reduce-scatter's or an all-gather's block is
// one message however many shards it holds, so its pairs are the same.
std::vector<std::vector<RankPair>> link_phases(const CollectiveShape& shape) {
  const TorusGrid grid(shape.torus_dims);
  std::vector<RankPair> pairs;
  for (std::size_t j = 0; j < grid.count(); ++j) {
    for (int direction : {1, -1}) {
      const std::vector<RankPair> line = torus_neighbour_pairs(grid, j, direction);
      pairs.insert(pairs.end(), line.begin(), line.end());
    }
  }
  return {pairs};
}

}  // namespace

const AlgorithmParts& bidirectional_torus_parts() {
  static const AlgorithmParts parts{torus_supports, build,        steps,      order,
                                    time_ps,        std::nullopt, link_phases};
  return parts;
}

}  // namespace spmd::collectives
