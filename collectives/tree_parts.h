#pragma once
// Inside collectives/: the pipelined heap-ordered binary tree, shared by the binary tree and the
// double binary tree. Position i's children are 2i+1 and 2i+2; `ring` maps positions to ranks.
// The elements are cut into pipeline pieces; in the reduce phase a node at depth d sends piece c
// to its parent at step (D - d) + c (D: the deepest depth), in the broadcast phase at step
// R + d + c down to its children (R: the reduce phase's step count).

#include <cstdint>
#include <vector>

#include "collectives/schedule_builder.h"
#include "collectives/step_source.h"

namespace spmd::collectives {

int tree_depth(int n);  // depth of position n - 1

// Adds the all-reduce (reduce then broadcast) of elements [base, base + count) starting at step
// 0; or only the broadcast from position 0 when `broadcast_only`. The reduce phase lasts as
// long as `phase_elements` would need (at least `count`): the double binary tree passes its
// larger half so that both trees turn to broadcasting at the same step. Otherwise, with one
// piece fewer, one tree's first broadcast would share a link with the other's last reduce.
void add_tree(ScheduleBuilder& builder, const RingOrder& positions, std::int64_t base,
              std::int64_t count, const CollectiveShape& shape, bool broadcast_only,
              std::int64_t phase_elements = 0);

// The steps add_tree adds (same arguments), produced one at a time.
class TreeSteps {
 public:
  TreeSteps(const RingOrder& positions, std::int64_t base, std::int64_t count,
            const CollectiveShape& shape, bool broadcast_only, std::int64_t phase_elements = 0);
  std::size_t step_count() const { return step_count_; }
  // Appends step `index`'s transfers (index < step_count()): piece by piece, then by position.
  void append_step(std::size_t index, std::vector<Transfer>& out) const;

 private:
  std::vector<int> ranks_;  // position -> rank
  std::int64_t base_, count_, piece_, pieces_;
  int deepest_;
  std::int64_t reduce_steps_;
  std::size_t step_count_ = 0;
};

// The largest message of each step of that schedule, in bytes (zero in a step it leaves idle).
std::vector<std::int64_t> tree_step_bytes(int n, std::int64_t count, const CollectiveShape& shape,
                                          bool broadcast_only, std::int64_t phase_elements = 0);

}  // namespace spmd::collectives
