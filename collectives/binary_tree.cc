// Binary tree: a heap over ring positions, value(i) = (x_i + value(2i+1)) + value(2i+2), reduced
// up and broadcast down, pipelined piece by piece (collectives/tree_parts.h).

#include "collectives/algorithm_parts.h"
#include "collectives/tree_parts.h"
#include "cost_model/step_time.h"

namespace spmd::collectives {

int tree_depth(int n) {
  int depth = 0;
  for (int p = n - 1; p > 0; p = (p - 1) / 2) ++depth;
  return depth;
}

namespace {

int depth_of(int position) { return tree_depth(position + 1); }

std::int64_t piece_count(std::int64_t count, std::int64_t piece) {
  return (count + piece - 1) / piece;
}

// Steps in one phase of a tree of depth `deepest` carrying `pieces` pieces, one depth per step.
std::int64_t phase_steps(int deepest, std::int64_t pieces) {
  return pieces == 0 ? 0 : deepest + pieces - 1;
}

}  // namespace

void add_tree(ScheduleBuilder& builder, const RingOrder& positions, std::int64_t base,
              std::int64_t count, const CollectiveShape& shape, bool broadcast_only,
              std::int64_t phase_elements) {
  const int n = positions.size();
  const int deepest = tree_depth(n);
  const std::int64_t piece = piece_elements(shape);
  const std::int64_t pieces = piece_count(count, piece);
  const std::int64_t reduce_steps =
      broadcast_only ? 0
                     : phase_steps(deepest, piece_count(std::max(count, phase_elements), piece));
  for (std::int64_t c = 0; c < pieces; ++c) {
    const std::int64_t begin = base + c * piece, end = base + std::min(count, (c + 1) * piece);
    for (int i = 1; i < n; ++i) {  // children in position order: 2i+1 applies before 2i+2
      const int parent = (i - 1) / 2;
      const int d = depth_of(i);
      const int child = positions.rank_at(i), up = positions.rank_at(parent);
      if (!broadcast_only) {
        builder.add(
            static_cast<std::size_t>(deepest - d + c),
            Transfer{child, up, begin, end, begin, SourceBuffer::work, TransferAction::reduce});
      }
      builder.add(static_cast<std::size_t>(reduce_steps + (d - 1) + c),
                  Transfer{up, child, begin, end, begin, SourceBuffer::work, TransferAction::copy});
    }
  }
}

TreeSteps::TreeSteps(const RingOrder& positions, std::int64_t base, std::int64_t count,
                     const CollectiveShape& shape, bool broadcast_only,
                     std::int64_t phase_elements)
    : ranks_(positions.walk(0, 1)),
      base_(base),
      count_(count),
      piece_(piece_elements(shape)),
      pieces_(piece_count(count, piece_)),
      deepest_(tree_depth(positions.size())),
      reduce_steps_(broadcast_only ? 0
                                   : phase_steps(deepest_, piece_count(std::max(count, phase_elements),
                                                                      piece_))) {
  if (positions.size() > 1 && pieces_ > 0) {
    step_count_ = static_cast<std::size_t>(reduce_steps_ + phase_steps(deepest_, pieces_));
  }
}

// Reduce step t carries piece c from depth deepest - t + c; broadcast step u carries piece c to
// depth u + 1 - c. Either way the pieces in the window, in order, each over its depth's positions.
void TreeSteps::append_step(std::size_t index, std::vector<Transfer>& out) const {
  const bool up = static_cast<std::int64_t>(index) < reduce_steps_;
  const std::int64_t t = up ? static_cast<std::int64_t>(index)
                            : static_cast<std::int64_t>(index) - reduce_steps_;
  const std::int64_t first = std::max<std::int64_t>(0, t - deepest_ + 1);
  const std::int64_t last = std::min(pieces_ - 1, t);
  const auto n = static_cast<std::int64_t>(ranks_.size());
  for (std::int64_t c = first; c <= last; ++c) {
    const std::int64_t depth = up ? deepest_ - t + c : t + 1 - c;
    const std::int64_t begin = base_ + c * piece_, end = base_ + std::min(count_, (c + 1) * piece_);
    const std::int64_t end_position = std::min(n, (std::int64_t{2} << depth) - 1);
    for (std::int64_t i = (std::int64_t{1} << depth) - 1; i < end_position; ++i) {
      const int child = ranks_[static_cast<std::size_t>(i)];
      const int parent = ranks_[static_cast<std::size_t>((i - 1) / 2)];
      add_transfer(out, up ? Transfer{child, parent, begin, end, begin, SourceBuffer::work,
                                      TransferAction::reduce}
                           : Transfer{parent, child, begin, end, begin, SourceBuffer::work,
                                      TransferAction::copy});
    }
  }
}

std::vector<std::int64_t> tree_step_bytes(int n, std::int64_t count, const CollectiveShape& shape,
                                          bool broadcast_only, std::int64_t phase_elements) {
  const int deepest = tree_depth(n);
  const std::int64_t piece = piece_elements(shape);
  const std::int64_t pieces = piece_count(count, piece);
  std::vector<std::int64_t> bytes;
  if (n == 1 || pieces == 0) return bytes;
  const std::int64_t steps =
      phase_steps(deepest, piece_count(std::max(count, phase_elements), piece));
  // In both phases step t carries pieces t - deepest + 1 .. t (one per depth).
  const auto phase = [&](std::int64_t phase_length) {
    for (std::int64_t t = 0; t < phase_length; ++t) {
      std::int64_t largest = 0;
      for (std::int64_t c = std::max<std::int64_t>(0, t - deepest + 1); c <= t && c < pieces; ++c) {
        largest = std::max(largest, std::min(piece, count - c * piece));
      }
      bytes.push_back(largest * shape.element_bytes);
    }
  };
  if (!broadcast_only) phase(steps);
  phase(phase_steps(deepest, pieces));
  return bytes;
}

namespace {

bool supports(const CollectiveShape& shape) {
  return shape.kind == CollectiveKind::all_reduce || shape.kind == CollectiveKind::broadcast;
}

// The broadcast's heap starts at the root: position p holds ring position root's + p.
std::vector<int> rotated_to_root(const CollectiveShape& shape) {
  const RingOrder ring(shape.ring, shape.ranks);
  std::vector<int> ranks;
  for (int p = 0; p < shape.ranks; ++p)
    ranks.push_back(ring.rank_at(ring.position_of(shape.root) + p));
  return ranks;
}

Schedule build(const CollectiveShape& shape) {
  const bool broadcast = shape.kind == CollectiveKind::broadcast;
  ScheduleBuilder b("binary_tree", shape, shape.elements, shape.elements,
                    broadcast ? WorkFill::zero : WorkFill::identity);
  if (broadcast) {
    for (int r = 0; r < shape.ranks; ++r) b.set_input_offset(r, r == shape.root ? 0 : -1);
  }
  const RingOrder positions(broadcast ? rotated_to_root(shape) : shape.ring, shape.ranks);
  add_tree(b, positions, 0, shape.elements, shape, broadcast);
  return b.build();
}

// One tree's steps; a parent receives from both its children in a step, so the most a rank
// receives is found by walking the steps.
class BinaryTreeSteps final : public StepSource {
 public:
  explicit BinaryTreeSteps(const CollectiveShape& shape)
      : StepSource(shape.ranks, shape.elements),
        tree_(RingOrder(shape.kind == CollectiveKind::broadcast ? rotated_to_root(shape)
                                                                : shape.ring,
                        shape.ranks),
              0, shape.elements, shape, shape.kind == CollectiveKind::broadcast) {
    set_max_received(received_walk(*this));
  }
  std::size_t raw_step_count() const override { return tree_.step_count(); }
  void raw_step(std::size_t index, std::vector<Transfer>& out) const override {
    out.clear();
    tree_.append_step(index, out);
  }

 private:
  TreeSteps tree_;
};

std::shared_ptr<const StepSource> steps(const CollectiveShape& shape) {
  return std::make_shared<BinaryTreeSteps>(shape);
}

ReductionOrder order(const CollectiveShape& shape) {
  return {.algorithm = ReductionAlgorithm::binary_tree, .ring = shape.ring};
}

std::int64_t time_ps(const CollectiveShape& shape, std::int64_t latency_ps,
                     std::int64_t bandwidth_bytes_per_s) {
  return cost_model::steps_time_ps(
      tree_step_bytes(shape.ranks, shape.elements, shape, shape.kind == CollectiveKind::broadcast),
      latency_ps, bandwidth_bytes_per_s);
}

}  // namespace

const AlgorithmParts& binary_tree_parts() {
  static const AlgorithmParts parts{supports, build, steps, order, time_ps,
                                    ReductionAlgorithm::binary_tree};
  return parts;
}

}  // namespace spmd::collectives
