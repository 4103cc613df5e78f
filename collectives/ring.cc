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

RingAllReduceSteps::RingAllReduceSteps(const RingOrder& ring, std::int64_t base,
                                       std::int64_t count, const CollectiveShape& shape)
    : ranks_(ring.walk(0, 1)),
      base_(base),
      count_(count),
      element_bytes_(shape.element_bytes),
      chunk_bytes_(shape.pipeline_chunk_bytes) {
  const int n = ring.size();
  if (n > 1) {
    step_count_ = static_cast<std::size_t>(
        nccl_ring_loop_count(count, n, element_bytes_, chunk_bytes_) * 2 * (n - 1));
  }
}

NcclRingLoop RingAllReduceSteps::loop(std::int64_t index) const {
  return nccl_ring_loop(count_, static_cast<int>(ranks_.size()), element_bytes_, chunk_bytes_,
                        index);
}

// As add_ring_all_reduce, with positions walked incrementally instead of taken mod n.
void RingAllReduceSteps::append_step(std::size_t index, std::vector<Transfer>& out) const {
  const int n = static_cast<int>(ranks_.size());
  const auto steps_per_loop = static_cast<std::size_t>(2 * (n - 1));
  const NcclRingLoop chunks = loop(static_cast<std::int64_t>(index / steps_per_loop));
  const int s = static_cast<int>(index % steps_per_loop);
  const bool reducing = s < n - 1;
  const TransferAction action = reducing ? TransferAction::reduce : TransferAction::copy;
  int at = reducing ? s + 1 : s - (n - 1);  // chunk 0's sender, < n
  // Chunk c + 1 starts where chunk c ends (NcclRingLoop::chunk_range); once one is empty at the
  // end of the buffer, the rest of the loop's are too.
  std::int64_t begin = std::min(count_, chunks.begin);
  for (int c = 0; c < n && begin < count_; ++c) {
    const std::int64_t end = std::min(count_, begin + chunks.chunk);
    const int next = at + 1 == n ? 0 : at + 1;
    out.push_back(Transfer{ranks_[static_cast<std::size_t>(at)],
                           ranks_[static_cast<std::size_t>(next)], base_ + begin, base_ + end,
                           base_ + begin, SourceBuffer::work, action});
    at = next;
    begin = end;
  }
}

// Full loops all have the same chunks; only the last may differ.
std::int64_t RingAllReduceSteps::largest_chunk() const {
  if (step_count_ == 0) return 0;
  const int n = static_cast<int>(ranks_.size());
  const std::int64_t loops = nccl_ring_loop_count(count_, n, element_bytes_, chunk_bytes_);
  std::int64_t largest = 0;
  for (std::int64_t index : {std::int64_t{0}, loops - 1}) {
    const auto [begin, end] = loop(index).chunk_range(count_, 0);
    largest = std::max(largest, end - begin);
  }
  return largest;
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

// The same schedules one step at a time (collectives/step_source.h). Every kind but the
// all-reduce moves one block (or piece) per rank and step; positions are kept in [0, n).
class RingSteps final : public StepSource {
 public:
  explicit RingSteps(const CollectiveShape& shape)
      : StepSource(shape.ranks, shape.kind == CollectiveKind::all_gather
                                    ? shape.ranks * shape.elements
                                    : shape.elements),
        shape_(without_ring(shape)),
        ring_(RingOrder(shape.ring, shape.ranks).walk(0, 1)),
        root_position_(RingOrder(shape.ring, shape.ranks).position_of(shape.root)),
        all_reduce_(RingOrder(shape.ring, shape.ranks), 0, shape.elements, shape) {
    set_max_received(shape.ranks > 1 ? largest_message() : 0);
  }

  std::size_t raw_step_count() const override {
    const auto n = static_cast<std::size_t>(shape_.ranks);
    switch (shape_.kind) {
      case CollectiveKind::all_reduce: return all_reduce_.step_count();
      case CollectiveKind::all_to_all: return std::max<std::size_t>(1, n - 1);  // local copies
      case CollectiveKind::broadcast: {
        const std::int64_t pieces = piece_count();
        return n > 1 && pieces > 0 ? static_cast<std::size_t>(pieces) + n - 2 : 0;
      }
      default: return n - 1;
    }
  }

  void raw_step(std::size_t index, std::vector<Transfer>& out) const override {
    out.clear();
    switch (shape_.kind) {
      case CollectiveKind::all_reduce: all_reduce_.append_step(index, out); break;
      case CollectiveKind::reduce_scatter: reduce_scatter_step(static_cast<int>(index), out); break;
      case CollectiveKind::all_gather: all_gather_step(static_cast<int>(index), out); break;
      case CollectiveKind::all_to_all: all_to_all_step(static_cast<int>(index), out); break;
      case CollectiveKind::broadcast: broadcast_step(static_cast<std::int64_t>(index), out); break;
      case CollectiveKind::permute: break;
    }
  }

 private:
  int rank_at(int position) const {  // position in [0, 2n)
    const int n = shape_.ranks;
    return ring_[static_cast<std::size_t>(position >= n ? position - n : position)];
  }
  std::int64_t block() const { return shape_.elements / shape_.ranks; }
  std::int64_t piece_count() const {
    const std::int64_t piece = piece_elements(shape_);
    return (shape_.elements + piece - 1) / piece;
  }
  std::int64_t largest_message() const {
    switch (shape_.kind) {
      case CollectiveKind::all_reduce: return all_reduce_.largest_chunk();
      case CollectiveKind::all_gather: return shape_.elements;
      case CollectiveKind::broadcast: return std::min(piece_elements(shape_), shape_.elements);
      default: return block();
    }
  }

  void reduce_scatter_step(int s, std::vector<Transfer>& out) const {
    const int n = shape_.ranks;
    const std::int64_t b = block();
    for (int p = 0, from = (s + 1) % n; p < n; ++p, from = from + 1 == n ? 0 : from + 1) {
      const int owner = ring_[static_cast<std::size_t>(p)];
      add_transfer(out, Transfer{rank_at(from), rank_at(from + 1), owner * b, (owner + 1) * b,
                                 owner * b, SourceBuffer::work, TransferAction::reduce});
    }
  }

  void all_gather_step(int s, std::vector<Transfer>& out) const {
    const int n = shape_.ranks;
    const std::int64_t e = shape_.elements;
    for (int p = 0, at = n - s; p < n; ++p, at = at + 1 == n ? 0 : at + 1) {
      const int owner = rank_at(at);  // the block that started at position p - s
      add_transfer(out, Transfer{ring_[static_cast<std::size_t>(p)], rank_at(p + 1), owner * e,
                                 (owner + 1) * e, owner * e, SourceBuffer::work,
                                 TransferAction::copy});
    }
  }

  void all_to_all_step(int step, std::vector<Transfer>& out) const {
    const int n = shape_.ranks;
    const std::int64_t b = block();
    if (step == 0) {
      for (int d = 0; d < n; ++d) {
        add_transfer(out, Transfer{d, d, d * b, (d + 1) * b, d * b, SourceBuffer::input,
                                   TransferAction::copy});
      }
    }
    const int k = step + 1;
    if (k >= n) return;
    for (int p = 0; p < n; ++p) {
      const int from = ring_[static_cast<std::size_t>(p)], to = rank_at(p + k);
      add_transfer(out, Transfer{from, to, to * b, (to + 1) * b, from * b, SourceBuffer::input,
                                 TransferAction::copy});
    }
  }

  // Step u carries piece u - j from chain position j, for each j in order.
  void broadcast_step(std::int64_t u, std::vector<Transfer>& out) const {
    const int n = shape_.ranks;
    const std::int64_t piece = piece_elements(shape_);
    const auto first_j = static_cast<int>(std::max<std::int64_t>(0, u - piece_count() + 1));
    const auto last_j = static_cast<int>(std::min<std::int64_t>(n - 2, u));
    for (int j = first_j; j <= last_j; ++j) {
      const std::int64_t begin = (u - j) * piece, end = std::min(shape_.elements, begin + piece);
      const int from = (root_position_ + j) % n;
      add_transfer(out, Transfer{rank_at(from), rank_at(from + 1), begin, end, begin,
                                 SourceBuffer::work, TransferAction::copy});
    }
  }

  CollectiveShape shape_;
  std::vector<int> ring_;  // position -> rank
  int root_position_;
  RingAllReduceSteps all_reduce_;
};

std::shared_ptr<const StepSource> steps(const CollectiveShape& shape) {
  return std::make_shared<RingSteps>(shape);
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
  static const AlgorithmParts parts{supports, build,    steps, order, time_ps,
                                    ReductionAlgorithm::nccl_ring, link_phases};
  return parts;
}

}  // namespace spmd::collectives
