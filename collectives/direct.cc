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
  static const AlgorithmParts parts{supports, build, order, time_ps, ReductionAlgorithm::xla_cpu};
  return parts;
}

}  // namespace spmd::collectives
