#pragma once
// Inside collectives/: torus passes (reference/torus_passes.h) run side by side, the schedule
// shared by the torus and the bidirectional torus. The passes (all with dimension orders of one
// length L) move in lockstep phases: the i-th reduce-scatter phase takes every pass's i-th
// dimension, for i = 0 .. L-1, then the all-gather phases take them back in the reverse order
// (an all-reduce runs both halves, a reduce-scatter the first, an all-gather the second). A phase
// lasts as many steps as its longest ring (dims[j] - 1 steps along dimension j); a pass on a
// shorter one idles for the rest. In a step each pass sends every rank's block to its neighbour
// along the pass's dimension and direction (passes in order, then ranks in order): reduce-scatter
// step s sends block c - direction (s + 1) of the rank at coordinate c, all-gather step s sends
// block c - direction s. A piece pass's block is one message of one transfer per shard it holds, in
// rank order (same_message; reference/torus_passes.h).

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "collectives/algorithm.h"
#include "collectives/step_source.h"
#include "cost_model/link_time.h"
#include "reference/torus_passes.h"

namespace spmd::collectives {

// The elements each rank's work buffer holds: the all-gather's ranks * elements, else elements.
std::int64_t torus_work_elements(const CollectiveShape& shape);

// Whether both tori run the shape: an all-reduce, an all-gather, or a reduce-scatter whose
// elements split evenly over the ranks (as the ring's), over dims that cover the group.
bool torus_supports(const CollectiveShape& shape);

// The passes' shape.kind (all_reduce, reduce_scatter or all_gather) over the grid
// shape.torus_dims, the passes covering the work buffer. A reduce-scatter's passes must leave
// rank r its shard (elements r * elements / ranks onwards) and an all-gather's must start from
// it (torus_rank_order_passes).
Schedule build_torus_schedule(std::string algorithm_name, const CollectiveShape& shape,
                              const std::vector<TorusPass>& passes);
std::shared_ptr<const StepSource> torus_step_source(const CollectiveShape& shape,
                                                    std::vector<TorusPass> passes);

// The closed form when every message along dimension j takes per_dimension[j]'s latency plus
// its bytes at per_dimension[j]'s bandwidth: each step takes its slowest pass's largest message
// (an all-reduce's two halves take the same time each).
std::int64_t torus_passes_time_ps(const CollectiveShape& shape,
                                  const std::vector<TorusPass>& passes,
                                  std::span<const cost_model::RouteCost> per_dimension);

// Each rank to its neighbour along dimension j in `direction` (none for a dimension of size 1).
std::vector<RankPair> torus_neighbour_pairs(const TorusGrid& grid, std::size_t j, int direction);

}  // namespace spmd::collectives
