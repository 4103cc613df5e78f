// Double binary tree: the first half of the elements on the binary tree over the ring, the rest
// at the same time on the tree over the mirrored ring (position p holds ring[n - 1 - p]), whose
// root is a leaf of the first.

#include "collectives/algorithm_parts.h"
#include "collectives/tree_parts.h"
#include "cost_model/step_time.h"

namespace spmd::collectives {
namespace {

bool supports(const CollectiveShape& shape) { return shape.kind == CollectiveKind::all_reduce; }

Schedule build(const CollectiveShape& shape) {
  const std::int64_t first = first_half_elements(shape.elements);
  ScheduleBuilder b("double_binary_tree", shape, shape.elements, shape.elements,
                    WorkFill::identity);
  const RingOrder ring(shape.ring, shape.ranks);
  add_tree(b, ring, 0, first, shape, false);
  add_tree(b, ring.mirrored(), first, shape.elements - first, shape, false, first);
  return b.build();
}

// Step i: step i of the first tree, then of the second, as build adds them.
class DoubleBinaryTreeSteps final : public StepSource {
 public:
  explicit DoubleBinaryTreeSteps(const CollectiveShape& shape)
      : StepSource(shape.ranks, shape.elements),
        first_(RingOrder(shape.ring, shape.ranks), 0, first_half_elements(shape.elements), shape,
               false),
        second_(RingOrder(shape.ring, shape.ranks).mirrored(), first_half_elements(shape.elements),
                shape.elements - first_half_elements(shape.elements), shape, false,
                first_half_elements(shape.elements)) {
    set_max_received(received_walk(*this));
  }
  std::size_t raw_step_count() const override {
    return std::max(first_.step_count(), second_.step_count());
  }
  void raw_step(std::size_t index, std::vector<Transfer>& out) const override {
    out.clear();
    if (index < first_.step_count()) first_.append_step(index, out);
    if (index < second_.step_count()) second_.append_step(index, out);
  }

 private:
  TreeSteps first_, second_;
};

std::shared_ptr<const StepSource> steps(const CollectiveShape& shape) {
  return std::make_shared<DoubleBinaryTreeSteps>(shape);
}

ReductionOrder order(const CollectiveShape& shape) {
  return {.algorithm = ReductionAlgorithm::double_binary_tree, .ring = shape.ring};
}

std::int64_t time_ps(const CollectiveShape& shape, std::int64_t latency_ps,
                     std::int64_t bandwidth_bytes_per_s) {
  const std::int64_t first = first_half_elements(shape.elements);
  std::vector<std::int64_t> bytes = tree_step_bytes(shape.ranks, first, shape, false);
  const std::vector<std::int64_t> other =
      tree_step_bytes(shape.ranks, shape.elements - first, shape, false, first);
  if (other.size() > bytes.size()) bytes.resize(other.size(), 0);
  for (std::size_t i = 0; i < other.size(); ++i) bytes[i] = std::max(bytes[i], other[i]);
  return cost_model::steps_time_ps(bytes, latency_ps, bandwidth_bytes_per_s);
}

}  // namespace

const AlgorithmParts& double_binary_tree_parts() {
  static const AlgorithmParts parts{supports, build, steps, order, time_ps,
                                    ReductionAlgorithm::double_binary_tree};
  return parts;
}

}  // namespace spmd::collectives
