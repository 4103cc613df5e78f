#pragma once
// Inside collectives/: the ring all-reduce, shared by the ring and the bidirectional ring, for
// their schedules and their closed forms. Its loops and chunks are NCCL's, the same split the
// reference's nccl_ring order folds in (reference/nccl_ring_loops.h).

#include <cstdint>
#include <utility>
#include <vector>

#include "collectives/schedule_builder.h"
#include "collectives/step_source.h"
#include "reference/nccl_ring_loops.h"

namespace spmd::collectives {

// Adds a ring all-reduce of elements [base, base + count) along `ring`, starting at step
// `first_step`; returns the number of steps it takes.
std::size_t add_ring_all_reduce(ScheduleBuilder& builder, const RingOrder& ring, std::int64_t base,
                                std::int64_t count, const CollectiveShape& shape,
                                std::size_t first_step);

// The steps add_ring_all_reduce adds, produced one at a time: raw step i of the all-reduce is
// step first_step + i of the builder's.
class RingAllReduceSteps {
 public:
  RingAllReduceSteps(const RingOrder& ring, std::int64_t base, std::int64_t count,
                     const CollectiveShape& shape);
  std::size_t step_count() const { return step_count_; }
  // Appends step `index`'s transfers (index < step_count()), empty ones left out.
  void append_step(std::size_t index, std::vector<Transfer>& out) const;
  // The longest chunk of any loop: what a rank receives in a step at most.
  std::int64_t largest_chunk() const;

 private:
  NcclRingLoop loop(std::int64_t index) const;

  std::vector<int> ranks_;  // ring position -> rank
  std::int64_t base_, count_, element_bytes_, chunk_bytes_;
  std::size_t step_count_ = 0;
};

// The reduction order of ring all-reduces run with `shape`'s ring and pipeline pieces as NCCL's
// chunks (at least one element each), folding as `algorithm`.
ReductionOrder ring_chunked_order(ReductionAlgorithm algorithm, const CollectiveShape& shape);

// Each ring position's rank to the next one's (source, destination); none for one rank.
std::vector<RankPair> ring_neighbour_pairs(const RingOrder& ring);

// The largest message of each step of that all-reduce, in bytes.
std::vector<std::int64_t> ring_all_reduce_step_bytes(std::int64_t count, int n,
                                                     const CollectiveShape& shape);

}  // namespace spmd::collectives
