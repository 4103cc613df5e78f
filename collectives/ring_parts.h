#pragma once
// Inside collectives/: the ring all-reduce, shared by the ring and the bidirectional ring, for
// their schedules and their closed forms. Its loops and chunks are NCCL's, the same split the
// reference's nccl_ring order folds in (reference/nccl_ring_loops.h).

#include <cstdint>
#include <utility>
#include <vector>

#include "collectives/schedule_builder.h"
#include "reference/nccl_ring_loops.h"

namespace spmd::collectives {

// Adds a ring all-reduce of elements [base, base + count) along `ring`, starting at step
// `first_step`; returns the number of steps it takes.
std::size_t add_ring_all_reduce(ScheduleBuilder& builder, const RingOrder& ring, std::int64_t base,
                                std::int64_t count, const CollectiveShape& shape,
                                std::size_t first_step);

// The reduction order of ring all-reduces run with `shape`'s ring and pipeline pieces as NCCL's
// chunks (at least one element each), folding as `algorithm`.
ReductionOrder ring_chunked_order(ReductionAlgorithm algorithm, const CollectiveShape& shape);

// Each ring position's rank to the next one's (source, destination); none for one rank.
std::vector<RankPair> ring_neighbour_pairs(const RingOrder& ring);

// The largest message of each step of that all-reduce, in bytes.
std::vector<std::int64_t> ring_all_reduce_step_bytes(std::int64_t count, int n,
                                                     const CollectiveShape& shape);

}  // namespace spmd::collectives
