#pragma once
// Between a collective call on N-d arrays and the flat per-rank buffers an algorithm's schedule
// moves: each op's blocks are laid out contiguously in rank order before the schedule runs, and
// put back into the shape the op returns after. Only the layout changes; no value is computed.

#include "collectives/algorithm.h"
#include "reference/array.h"
#include "reference/collective_call.h"

namespace spmd::sim {

collectives::CollectiveKind collective_kind(CollectiveOp op);

// The flat input a rank's schedule starts from (its blocks in rank order where the op splits).
Array flat_input(const CollectiveCall& call, const Array& x, int group_size);

// The op's result for one rank, from the flat result range of its work buffer.
Array unflatten_result(const CollectiveCall& call, const Array& flat, const Array& x,
                       int group_size);

// ppermute / pshuffle as (source, destination) pairs of group ranks, indices taken mod n.
std::vector<std::pair<int, int>> permutation_pairs(const CollectiveCall& call, int group_size);

}  // namespace spmd::sim
