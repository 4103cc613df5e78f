// Direct: one step in which every rank sends what each other rank needs straight to it. A
// reduction applies the arrivals in rank order onto the identity: XLA:CPU's fold, a group of one
// included (XLA:CPU folds it too; -0.0 becomes +0.0).

#include "collectives/algorithm_parts.h"
#include "collectives/schedule_builder.h"
#include "cost_model/step_time.h"

namespace spmd::collectives {
namespace {

bool supports(const CollectiveShape& shape) {
  if (shape.kind == CollectiveKind::reduce_scatter || shape.kind == CollectiveKind::all_to_all) {
    return shape.elements % shape.ranks == 0;
  }
  return true;
}

Transfer transfer(int source, int destination, SourceBuffer from, std::int64_t begin,
                  std::int64_t end, std::int64_t dest_begin, TransferAction action) {
  return Transfer{source, destination, begin, end, dest_begin, from, action};
}

Schedule build_reduction(const CollectiveShape& shape, bool scatter) {
  const int n = shape.ranks;
  const std::int64_t block = scatter ? shape.elements / n : shape.elements;
  ScheduleBuilder b("direct", shape, shape.elements, block, WorkFill::identity);
  for (int d = 0; d < n; ++d) {
    b.set_input_offset(d, -1);
    const std::int64_t begin = scatter ? d * block : 0;
    for (int r = 0; r < n; ++r) {
      b.add(0,
            transfer(r, d, SourceBuffer::input, begin, begin + block, 0, TransferAction::reduce));
    }
  }
  return b.build();
}

Schedule build_all_gather(const CollectiveShape& shape) {
  const int n = shape.ranks;
  const std::int64_t e = shape.elements;
  ScheduleBuilder b("direct", shape, e, n * e, WorkFill::zero);
  for (int d = 0; d < n; ++d) {
    b.set_input_offset(d, d * e);
    for (int r = 0; r < n; ++r) {
      if (r != d) b.add(0, transfer(r, d, SourceBuffer::input, 0, e, r * e, TransferAction::copy));
    }
  }
  return b.build();
}

Schedule build_all_to_all(const CollectiveShape& shape) {
  const int n = shape.ranks;
  const std::int64_t block = shape.elements / n;
  ScheduleBuilder b("direct", shape, shape.elements, shape.elements, WorkFill::zero);
  for (int d = 0; d < n; ++d) {
    b.set_input_offset(d, -1);
    for (int r = 0; r < n; ++r) {
      b.add(0, transfer(r, d, SourceBuffer::input, d * block, (d + 1) * block, r * block,
                        TransferAction::copy));
    }
  }
  return b.build();
}

Schedule build_permute(const CollectiveShape& shape) {
  ScheduleBuilder b("direct", shape, shape.elements, shape.elements, WorkFill::zero);
  for (int d = 0; d < shape.ranks; ++d) b.set_input_offset(d, -1);
  for (auto [source, destination] : shape.permutation) {
    b.add(0, transfer(source, destination, SourceBuffer::input, 0, shape.elements, 0,
                      TransferAction::copy));
  }
  return b.build();
}

Schedule build_broadcast(const CollectiveShape& shape) {
  ScheduleBuilder b("direct", shape, shape.elements, shape.elements, WorkFill::zero);
  for (int d = 0; d < shape.ranks; ++d) {
    b.set_input_offset(d, d == shape.root ? 0 : -1);
    if (d != shape.root) {
      b.add(0, transfer(shape.root, d, SourceBuffer::input, 0, shape.elements, 0,
                        TransferAction::copy));
    }
  }
  return b.build();
}

Schedule build(const CollectiveShape& shape) {
  switch (shape.kind) {
    case CollectiveKind::all_reduce: return build_reduction(shape, false);
    case CollectiveKind::reduce_scatter: return build_reduction(shape, true);
    case CollectiveKind::all_gather: return build_all_gather(shape);
    case CollectiveKind::all_to_all: return build_all_to_all(shape);
    case CollectiveKind::permute: return build_permute(shape);
    case CollectiveKind::broadcast: return build_broadcast(shape);
  }
  return {};
}

// The one step, produced when the run reaches it: all pairs, so O(ranks^2) transfers while it
// runs (nothing smaller can carry it), but none held in between. What a rank receives at most has
// a formula for every kind but permute, whose pairs are counted.
class DirectSteps final : public StepSource {
 public:
  explicit DirectSteps(const CollectiveShape& shape)
      : StepSource(shape.ranks, work_elements_of(shape)), shape_(without_ring(shape)) {
    set_max_received(most_received());
  }
  std::size_t raw_step_count() const override { return 1; }
  void raw_step(std::size_t, std::vector<Transfer>& out) const override {
    out.clear();
    // The builder's steps with its builder: one step, so holding it while it runs is all there is.
    Schedule schedule = build(shape_);
    if (!schedule.steps.empty()) out = std::move(schedule.steps.front().transfers);
  }

 private:
  static std::int64_t work_elements_of(const CollectiveShape& shape) {
    switch (shape.kind) {
      case CollectiveKind::reduce_scatter: return shape.elements / shape.ranks;
      case CollectiveKind::all_gather: return shape.ranks * shape.elements;
      default: return shape.elements;
    }
  }

  std::int64_t most_received() const {
    const int n = shape_.ranks;
    switch (shape_.kind) {
      case CollectiveKind::all_reduce:
      case CollectiveKind::all_gather: return (n - 1) * shape_.elements;
      case CollectiveKind::reduce_scatter:
      case CollectiveKind::all_to_all: return (n - 1) * (shape_.elements / n);
      case CollectiveKind::broadcast: return n > 1 ? shape_.elements : 0;
      case CollectiveKind::permute: break;
    }
    std::vector<std::int64_t> senders(static_cast<std::size_t>(n), 0);
    std::int64_t most = 0;
    for (auto [source, destination] : shape_.permutation) {
      if (source == destination) continue;
      most = std::max(most, ++senders[static_cast<std::size_t>(destination)]);
    }
    return most * shape_.elements;
  }

  CollectiveShape shape_;
};

std::shared_ptr<const StepSource> steps(const CollectiveShape& shape) {
  return std::make_shared<DirectSteps>(shape);
}

ReductionOrder order(const CollectiveShape&) { return {.algorithm = ReductionAlgorithm::xla_cpu}; }

// One step whose largest message between two different ranks is one rank's input (all-reduce,
// all-gather, permute, broadcast) or one block (reduce-scatter, all-to-all).
std::int64_t time_ps(const CollectiveShape& shape, std::int64_t latency_ps,
                     std::int64_t bandwidth_bytes_per_s) {
  const int n = shape.ranks;
  const bool blocks =
      shape.kind == CollectiveKind::reduce_scatter || shape.kind == CollectiveKind::all_to_all;
  std::int64_t elements = blocks ? shape.elements / n : shape.elements;
  bool crosses = n > 1;
  if (shape.kind == CollectiveKind::permute) {
    crosses = false;
    for (auto [source, destination] : shape.permutation) crosses = crosses || source != destination;
  }
  if (!crosses) elements = 0;
  return cost_model::step_time_ps(elements * shape.element_bytes, latency_ps,
                                  bandwidth_bytes_per_s);
}

}  // namespace

const AlgorithmParts& direct_parts() {
  static const AlgorithmParts parts{supports, build, steps, order, time_ps,
                                    ReductionAlgorithm::xla_cpu};
  return parts;
}

}  // namespace spmd::collectives
