#pragma once
// Inside collectives/: each algorithm's three faces, defined in its own file (direct.cc, ring.cc,
// bidirectional_ring.cc, halving_doubling.cc, binary_tree.cc, double_binary_tree.cc, torus.cc,
// bidirectional_torus.cc)
// and dispatched by algorithm.cc.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "collectives/algorithm.h"
#include "collectives/step_source.h"
#include "cost_model/link_time.h"

namespace spmd::collectives {

struct AlgorithmParts {
  // Whether the algorithm can run this shape (kind, rank count, torus dims, ...).
  bool (*supports)(const CollectiveShape& shape);
  // The schedule; called only when supports(shape).
  Schedule (*build)(const CollectiveShape& shape);
  // The same schedule's steps produced one at a time (collectives/step_source.h), for runs that
  // need only their timing; called only when supports(shape).
  std::shared_ptr<const StepSource> (*steps)(const CollectiveShape& shape);
  // The order the reference folds in to give the schedule's bits (all_reduce, reduce_scatter).
  ReductionOrder (*order)(const CollectiveShape& shape);
  // The closed-form uncontended time: a formula over the algorithm's steps and message sizes,
  // written from the algorithm's structure, not by walking the built schedule, with the step
  // times of cost_model/step_time.h.
  std::int64_t (*time_ps)(const CollectiveShape& shape, std::int64_t latency_ps,
                          std::int64_t bandwidth_bytes_per_s);
  // The algorithm of every order() it gives, when that order needs nothing from the shape but
  // the ring; none for the tori, whose orders need each group's grid.
  std::optional<ReductionAlgorithm> reduction_algorithm;
  // The rank pairs of each phase (collectives::link_phases); null: no such structure.
  std::vector<std::vector<RankPair>> (*link_phases)(const CollectiveShape& shape) = nullptr;
  // The closed form with each phase's own link cost; null: one phase, time_ps.
  std::int64_t (*phased_time_ps)(const CollectiveShape& shape,
                                 std::span<const cost_model::RouteCost> per_phase) = nullptr;
};

const AlgorithmParts& direct_parts();
const AlgorithmParts& ring_parts();
const AlgorithmParts& bidirectional_ring_parts();
const AlgorithmParts& halving_doubling_parts();
const AlgorithmParts& binary_tree_parts();
const AlgorithmParts& double_binary_tree_parts();
const AlgorithmParts& torus_parts();
const AlgorithmParts& bidirectional_torus_parts();

}  // namespace spmd::collectives
