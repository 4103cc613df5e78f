// Bidirectional ring: the first half of the elements all-reduced on the ring, the rest at the
// same time on the ring walked the other way (position p holds ring[(n - p) % n]), so both
// directions of every link carry data.

#include "collectives/algorithm_parts.h"
#include "collectives/ring_parts.h"
#include "cost_model/step_time.h"

namespace spmd::collectives {
namespace {

bool supports(const CollectiveShape& shape) { return shape.kind == CollectiveKind::all_reduce; }

Schedule build(const CollectiveShape& shape) {
  const std::int64_t first = first_half_elements(shape.elements);
  ScheduleBuilder b("bidirectional_ring", shape, shape.elements, shape.elements,
                    WorkFill::identity);
  const RingOrder ring(shape.ring, shape.ranks);
  add_ring_all_reduce(b, ring, 0, first, shape, 0);
  add_ring_all_reduce(b, ring.reversed(), first, shape.elements - first, shape, 0);
  return b.build();
}

// Step i: step i of the forward ring, then of the reversed one, as build adds them. A rank
// receives from both directions in a step (on two ranks, twice from the same one), so the most
// it receives is found by walking the steps.
class BidirectionalRingSteps final : public StepSource {
 public:
  explicit BidirectionalRingSteps(const CollectiveShape& shape)
      : StepSource(shape.ranks, shape.elements),
        forward_(RingOrder(shape.ring, shape.ranks), 0, first_half_elements(shape.elements), shape),
        backward_(RingOrder(shape.ring, shape.ranks).reversed(),
                  first_half_elements(shape.elements),
                  shape.elements - first_half_elements(shape.elements), shape) {
    set_max_received(received_walk(*this));
  }

  std::size_t raw_step_count() const override {
    return std::max(forward_.step_count(), backward_.step_count());
  }
  void raw_step(std::size_t index, std::vector<Transfer>& out) const override {
    out.clear();
    if (index < forward_.step_count()) forward_.append_step(index, out);
    if (index < backward_.step_count()) backward_.append_step(index, out);
  }

 private:
  RingAllReduceSteps forward_, backward_;
};

std::shared_ptr<const StepSource> steps(const CollectiveShape& shape) {
  return std::make_shared<BidirectionalRingSteps>(shape);
}

ReductionOrder order(const CollectiveShape& shape) {
  return ring_chunked_order(ReductionAlgorithm::bidirectional_ring, shape);
}

// Step i carries step i of each direction: the larger of their messages.
std::int64_t time_ps(const CollectiveShape& shape, std::int64_t latency_ps,
                     std::int64_t bandwidth_bytes_per_s) {
  const std::int64_t first = first_half_elements(shape.elements);
  std::vector<std::int64_t> bytes = ring_all_reduce_step_bytes(first, shape.ranks, shape);
  const std::vector<std::int64_t> other =
      ring_all_reduce_step_bytes(shape.elements - first, shape.ranks, shape);
  if (other.size() > bytes.size()) bytes.resize(other.size(), 0);
  for (std::size_t i = 0; i < other.size(); ++i) bytes[i] = std::max(bytes[i], other[i]);
  return cost_model::steps_time_ps(bytes, latency_ps, bandwidth_bytes_per_s);
}

// One phase: every ring neighbour both ways.
std::vector<std::vector<RankPair>> link_phases(const CollectiveShape& shape) {
  const RingOrder ring(shape.ring, shape.ranks);
  std::vector<RankPair> pairs = ring_neighbour_pairs(ring);
  const std::vector<RankPair> back = ring_neighbour_pairs(ring.reversed());
  pairs.insert(pairs.end(), back.begin(), back.end());
  return {pairs};
}

}  // namespace

const AlgorithmParts& bidirectional_ring_parts() {
  static const AlgorithmParts parts{supports, build,   steps, order, time_ps,
                                    ReductionAlgorithm::bidirectional_ring, link_phases};
  return parts;
}

}  // namespace spmd::collectives
