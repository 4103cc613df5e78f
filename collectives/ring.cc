// Ring: NCCL's ring. All-reduce runs loop by loop; in each loop chunk c starts at ring position
// c + 1, is reduced around the ring (receiver's value + received) for n - 1 steps until position
// c holds it, then copied around for n - 1 more. Reduce-scatter, all-gather, all-to-all and
// broadcast have their own ring schedules.

#include "collectives/algorithm_parts.h"
#include "collectives/ring_parts.h"
#include "cost_model/step_time.h"

namespace spmd::collectives {

std::size_t add_ring_all_reduce(ScheduleBuilder& builder, const RingOrder& ring, std::int64_t base,
                                std::int64_t count, const CollectiveShape& shape,
                                std::size_t first_step) {
  const int n = ring.size();
  if (n == 1) return 0;
  std::size_t step = first_step;
  for (const auto& chunks :
       nccl_ring_loops(count, n, shape.element_bytes, shape.pipeline_chunk_bytes)) {
    for (int s = 0; s < 2 * (n - 1); ++s, ++step) {
      const bool reducing = s < n - 1;
      const int hop = reducing ? s : s - (n - 1);
      for (int c = 0; c < n; ++c) {
        // Reduce-scatter: chunk c is at position c + 1 + hop; all-gather: at c + hop.
        const std::int64_t at = reducing ? c + 1 + hop : c + hop;
        const auto [begin, end] = chunks[static_cast<std::size_t>(c)];
        builder.add(step, Transfer{ring.rank_at(at), ring.rank_at(at + 1), base + begin, base + end,
                                   base + begin, SourceBuffer::work,
                                   reducing ? TransferAction::reduce : TransferAction::copy});
      }
    }
  }
  return step - first_step;
}

std::vector<std::int64_t> ring_all_reduce_step_bytes(std::int64_t count, int n,
                                                     const CollectiveShape& shape) {
  std::vector<std::int64_t> bytes;
  if (n == 1) return bytes;
  for (const auto& chunks :
       nccl_ring_loops(count, n, shape.element_bytes, shape.pipeline_chunk_bytes)) {
    std::int64_t largest = 0;
    for (auto [begin, end] : chunks) largest = std::max(largest, end - begin);
    bytes.insert(bytes.end(), static_cast<std::size_t>(2 * (n - 1)), largest * shape.element_bytes);
  }
  return bytes;
}

namespace {

bool supports(const CollectiveShape& shape) {
  switch (shape.kind) {
    case CollectiveKind::all_reduce:
    case CollectiveKind::all_gather:
    case CollectiveKind::broadcast: return true;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all: return shape.elements % shape.ranks == 0;
    case CollectiveKind::permute: return false;
  }
  return false;
}

Schedule build_all_reduce(const CollectiveShape& shape) {
  ScheduleBuilder b("ring", shape, shape.elements, shape.elements, WorkFill::identity);
  add_ring_all_reduce(b, RingOrder(shape.ring, shape.ranks), 0, shape.elements, shape, 0);
  return b.build();
}

// Block of rank d (at ring position p) starts at p + 1 and ends, reduced, at p.
Schedule build_reduce_scatter(const CollectiveShape& shape) {
  const int n = shape.ranks;
  const RingOrder ring(shape.ring, n);
  const std::int64_t block = shape.elements / n;
  ScheduleBuilder b("ring", shape, shape.elements, shape.elements, WorkFill::identity);
  for (int d = 0; d < n; ++d) b.set_result(d, d * block, (d + 1) * block);
  for (int s = 0; s < n - 1; ++s) {
    for (int p = 0; p < n; ++p) {
      const int owner = ring.rank_at(p);
      b.add(static_cast<std::size_t>(s), Transfer{ring.rank_at(p + 1 + s), ring.rank_at(p + 2 + s),
                                                  owner * block, (owner + 1) * block, owner * block,
                                                  SourceBuffer::work, TransferAction::reduce});
    }
  }
  return b.build();
}

// In step s the rank at position p passes on the block that started at position p - s.
Schedule build_all_gather(const CollectiveShape& shape) {
  const int n = shape.ranks;
  const RingOrder ring(shape.ring, n);
  const std::int64_t e = shape.elements;
  ScheduleBuilder b("ring", shape, e, n * e, WorkFill::zero);
  for (int d = 0; d < n; ++d) b.set_input_offset(d, d * e);
  for (int s = 0; s < n - 1; ++s) {
    for (int p = 0; p < n; ++p) {
      const int owner = ring.rank_at(p - s);
      b.add(static_cast<std::size_t>(s),
            Transfer{ring.rank_at(p), ring.rank_at(p + 1), owner * e, (owner + 1) * e, owner * e,
                     SourceBuffer::work, TransferAction::copy});
    }
  }
  return b.build();
}

// Step k (1..n-1): the rank at position p sends its block for position p + k straight there.
Schedule build_all_to_all(const CollectiveShape& shape) {
  const int n = shape.ranks;
  const RingOrder ring(shape.ring, n);
  const std::int64_t block = shape.elements / n;
  ScheduleBuilder b("ring", shape, shape.elements, shape.elements, WorkFill::zero);
  for (int d = 0; d < n; ++d) {
    b.set_input_offset(d, -1);
    b.add(0, Transfer{d, d, d * block, (d + 1) * block, d * block, SourceBuffer::input,
                      TransferAction::copy});
  }
  for (int k = 1; k < n; ++k) {
    for (int p = 0; p < n; ++p) {
      const int from = ring.rank_at(p), to = ring.rank_at(p + k);
      b.add(static_cast<std::size_t>(k - 1),
            Transfer{from, to, to * block, (to + 1) * block, from * block, SourceBuffer::input,
                     TransferAction::copy});
    }
  }
  return b.build();
}

// A pipelined chain from the root: piece t leaves chain position j at step t + j.
Schedule build_broadcast(const CollectiveShape& shape) {
  const int n = shape.ranks;
  const RingOrder ring(shape.ring, n);
  const int root_position = ring.position_of(shape.root);
  const std::int64_t piece = piece_elements(shape);
  const std::int64_t pieces = (shape.elements + piece - 1) / piece;
  ScheduleBuilder b("ring", shape, shape.elements, shape.elements, WorkFill::zero);
  for (int d = 0; d < n; ++d) b.set_input_offset(d, d == shape.root ? 0 : -1);
  for (int j = 0; j + 1 < n; ++j) {
    for (std::int64_t t = 0; t < pieces; ++t) {
      const std::int64_t begin = t * piece, end = std::min(shape.elements, begin + piece);
      b.add(static_cast<std::size_t>(t + j),
            Transfer{ring.rank_at(root_position + j), ring.rank_at(root_position + j + 1), begin,
                     end, begin, SourceBuffer::work, TransferAction::copy});
    }
  }
  return b.build();
}

Schedule build(const CollectiveShape& shape) {
  switch (shape.kind) {
    case CollectiveKind::all_reduce: return build_all_reduce(shape);
    case CollectiveKind::reduce_scatter: return build_reduce_scatter(shape);
    case CollectiveKind::all_gather: return build_all_gather(shape);
    case CollectiveKind::all_to_all: return build_all_to_all(shape);
    case CollectiveKind::broadcast: return build_broadcast(shape);
    case CollectiveKind::permute: break;
  }
  return {};
}

ReductionOrder order(const CollectiveShape& shape) {
  return ring_chunked_order(ReductionAlgorithm::nccl_ring, shape);
}

std::int64_t broadcast_time_ps(const CollectiveShape& shape, std::int64_t latency_ps,
                               std::int64_t bandwidth_bytes_per_s) {
  const int n = shape.ranks;
  const std::int64_t piece = piece_elements(shape);
  const std::int64_t pieces = (shape.elements + piece - 1) / piece;
  std::vector<std::int64_t> bytes;
  for (std::int64_t step = 0; n > 1 && step < pieces + n - 2; ++step) {
    std::int64_t largest = 0;  // the pieces t = step - j for chain positions j
    for (int j = 0; j + 1 < n; ++j) {
      const std::int64_t t = step - j;
      if (t >= 0 && t < pieces)
        largest = std::max(largest, std::min(piece, shape.elements - t * piece));
    }
    bytes.push_back(largest * shape.element_bytes);
  }
  return cost_model::steps_time_ps(bytes, latency_ps, bandwidth_bytes_per_s);
}

std::int64_t time_ps(const CollectiveShape& shape, std::int64_t latency_ps,
                     std::int64_t bandwidth_bytes_per_s) {
  const int n = shape.ranks;
  const std::int64_t block_bytes =
      (shape.kind == CollectiveKind::all_gather ? shape.elements : shape.elements / n) *
      shape.element_bytes;
  switch (shape.kind) {
    case CollectiveKind::all_reduce:
      return cost_model::steps_time_ps(ring_all_reduce_step_bytes(shape.elements, n, shape),
                                       latency_ps, bandwidth_bytes_per_s);
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather:
    case CollectiveKind::all_to_all:
      return (n - 1) * cost_model::step_time_ps(block_bytes, latency_ps, bandwidth_bytes_per_s);
    case CollectiveKind::broadcast:
      return broadcast_time_ps(shape, latency_ps, bandwidth_bytes_per_s);
    case CollectiveKind::permute: break;
  }
  return 0;
}

}  // namespace

std::vector<RankPair> ring_neighbour_pairs(const RingOrder& ring) {
  std::vector<RankPair> pairs;
  if (ring.size() < 2) return pairs;
  for (int p = 0; p < ring.size(); ++p) pairs.emplace_back(ring.rank_at(p), ring.rank_at(p + 1));
  return pairs;
}

namespace {

std::vector<std::vector<RankPair>> link_phases(const CollectiveShape& shape) {
  if (shape.kind == CollectiveKind::all_to_all || shape.kind == CollectiveKind::permute) return {};
  return {ring_neighbour_pairs(RingOrder(shape.ring, shape.ranks))};
}

}  // namespace

ReductionOrder ring_chunked_order(ReductionAlgorithm algorithm, const CollectiveShape& shape) {
  return {.algorithm = algorithm,
          .ring = shape.ring,
          .nccl_chunk_bytes = std::max(shape.pipeline_chunk_bytes, shape.element_bytes)};
}

const AlgorithmParts& ring_parts() {
  static const AlgorithmParts parts{supports, build,     order, time_ps, ReductionAlgorithm::nccl_ring,
                                    link_phases};
  return parts;
}

}  // namespace spmd::collectives
