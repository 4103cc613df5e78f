#pragma once
// The collective algorithms, each written once as three separate things: its schedule (what the
// simulator executes), its reduction order (what the reference folds in), and its closed-form
// alpha-beta time on uncontended links. See collectives/schedule.h for the schedule's meaning.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/schedule.h"
#include "collectives/step_source.h"
#include "cost_model/link_time.h"
#include "reference/reduction_order.h"
#include "topology/topology.h"

namespace spmd::collectives {

enum class Algorithm {
  direct,              // one step, all pairs; XLA:CPU's fold (identity, then rank order)
  ring,                // NCCL's ring: chunk c reduced from ring position c+1 to c, then copied
  bidirectional_ring,  // half the data on the ring, half on the reversed ring
  halving_doubling,    // recursive halving-doubling (butterfly)
  binary_tree,         // reduce up a heap-ordered binary tree, broadcast down
  double_binary_tree,  // two binary trees, half the data each (NCCL's double binary tree)
  torus,               // per dimension: reduce-scatter along each, then all-gather back (also
                       // reduce-scatter and all-gather alone)
  bidirectional_torus,  // 2D parts of the data as torus, each its own dimension order and
                        // direction, all at once: both ways of every dimension's links busy
};

std::string_view algorithm_name(Algorithm algorithm);
Algorithm algorithm_from_name(std::string_view name);  // spmd::Error listing the names

enum class CollectiveKind {
  all_reduce,
  reduce_scatter,
  all_gather,
  all_to_all,
  permute,
  broadcast
};

// "all_reduce", "reduce_scatter", "all_gather", "all_to_all", "permute", "broadcast".
std::string_view collective_kind_name(CollectiveKind kind);

// What to schedule. Sizes are per rank: all_reduce / reduce_scatter / all_to_all take
// `elements` in and (reduce_scatter) give elements / ranks out; all_gather takes `elements`
// and gives ranks * elements; permute moves `elements` along `permutation` (pairs of source,
// destination ranks; non-receivers get zeros); broadcast sends `root`'s elements to all.
struct CollectiveShape {
  CollectiveKind kind = CollectiveKind::all_reduce;
  int ranks = 1;
  std::int64_t elements = 0;
  std::int64_t element_bytes = 4;
  std::vector<int> ring;                         // ring position -> rank; empty: 0..n-1
  std::vector<int> torus_dims;                   // torus: sizes per dimension, product == ranks
  std::vector<std::pair<int, int>> permutation;  // permute
  int root = 0;                                  // broadcast
  std::int64_t pipeline_chunk_bytes = 2 * 1024 * 1024;  // large messages split and pipelined
};

Schedule build_schedule(Algorithm algorithm, const CollectiveShape& shape);
// The same schedule's steps, produced one at a time as a run needs them (collectives/
// step_source.h): what the simulator's timing uses, holding O(ranks) instead of every step.
std::shared_ptr<const StepSource> step_source(Algorithm algorithm, const CollectiveShape& shape);

// The order in which the schedule's reductions fold (all_reduce, reduce_scatter), for the
// reference backend: folding in it gives the same bits as executing the schedule.
ReductionOrder reduction_order(Algorithm algorithm, const CollectiveShape& shape);

// Uncontended time of the schedule when every transfer between ranks a and b takes
// `latency_ps + ceil(bytes * 1e12 / bandwidth_bytes_per_s)` (one link, uniform alpha and beta).
std::int64_t closed_form_time_ps(Algorithm algorithm, const CollectiveShape& shape,
                                 std::int64_t latency_ps, std::int64_t bandwidth_bytes_per_s);

// The (source, destination) rank pairs an algorithm's messages go between, phase by phase, for the
// algorithms whose schedules have that fixed structure: the ring (one phase: each ring position to
// the next; not all_to_all, which sends straight to every rank), the bidirectional ring (one phase,
// both ways round), the torus (one phase per dimension, dimension 0 first: each rank to the next
// along that dimension) and the bidirectional torus (one phase: each rank to both its neighbours
// along every dimension). Every message between two different ranks goes between a pair of its
// phase, and each phase's steps run one after another. Empty for the other algorithms and shapes.
using RankPair = std::pair<int, int>;
std::vector<std::vector<RankPair>> link_phases(Algorithm algorithm, const CollectiveShape& shape);

// The closed form when every message of phase i (as link_phases gives them) takes
// per_phase[i].latency_ps + ceil(bytes * 1e12 / per_phase[i].bandwidth_bytes_per_s); equal to
// closed_form_time_ps when every phase has the same cost. Only for shapes link_phases covers.
std::int64_t phased_closed_form_time_ps(Algorithm algorithm, const CollectiveShape& shape,
                                        std::span<const cost_model::RouteCost> per_phase);

// The reference order an algorithm's reductions fold as when its rings follow group rank order
// (ReductionOrder{.algorithm = *reduction_algorithm_of(a)}); none for the tori, whose orders need
// each group's grid.
std::optional<ReductionAlgorithm> reduction_algorithm_of(Algorithm algorithm);
// The inverse: the algorithm whose reductions fold as `order`; none for the orders only a real
// library has (Gloo, Open MPI, NCCL's tree chain) and for the tori.
std::optional<Algorithm> algorithm_folding_as(ReductionAlgorithm order);
// Every algorithm, in the order algorithm_from_name lists them.
std::vector<Algorithm> all_algorithms();

// Which algorithms can run `shape` (e.g. halving_doubling needs a power of two ranks, the tori
// need torus_dims), and the automatic choice by message size and topology kind: a large
// all-reduce, reduce-scatter or all-gather over a grid of two or more dimensions runs as the
// bidirectional torus where the grid's lines close into rings of links
// (topology::TopologyTraits::wrap_around) and it can run the shape, else as the torus where it
// can, else as the ring.
bool supports(Algorithm algorithm, const CollectiveShape& shape);
Algorithm choose_algorithm(const CollectiveShape& shape, const topology::TopologyTraits& topology);

}  // namespace spmd::collectives
