#include "collectives/torus_schedule.h"

#include <fmt/format.h>

#include <algorithm>

#include "collectives/schedule_builder.h"
#include "cost_model/step_time.h"
#include "reference/check.h"
#include "reference/reduction_order.h"

namespace spmd::collectives {
namespace {

using Range = std::pair<std::int64_t, std::int64_t>;  // [begin, end)

Range block_of(Range range, int parts, int b) {
  const std::int64_t length = range.second - range.first;
  return {range.first + even_split_begin(length, parts, b),
          range.first + even_split_begin(length, parts, b + 1)};
}

int mod(std::int64_t value, int size) { return static_cast<int>((value % size + size) % size); }

// The dimension a pass works along at `level`.
std::size_t dimension_at(const TorusPass& pass, std::size_t level) {
  return static_cast<std::size_t>(pass.dimension_order[level]);
}

// The number of dimensions every pass goes along (one pass at least).
std::size_t levels(const std::vector<TorusPass>& passes) {
  return passes.front().dimension_order.size();
}

// Steps of the phases at `level`: the longest ring among the passes' dimensions there.
int phase_steps(const TorusGrid& grid, const std::vector<TorusPass>& passes, std::size_t level) {
  int steps = 0;
  for (const TorusPass& pass : passes)
    steps = std::max(steps, grid.size(dimension_at(pass, level)) - 1);
  return steps;
}

// A piece pass's shards: shard q is the q-th of `ranks` even parts of [pass.begin, pass.end), and
// the pass moves its piece pass.shard_piece (of pass.shard_pieces even parts).
Range piece_of_shard(const TorusPass& pass, int ranks, int q) {
  return block_of(block_of({pass.begin, pass.end}, ranks, q), pass.shard_pieces, pass.shard_piece);
}

// The ranks whose shards a piece pass's block holds, in rank order, into `ranks`: those at
// `fixed`'s coordinate on every dimension where it is not -1. `coordinates` is scratch space.
void block_shards(const TorusGrid& grid, const std::vector<int>& fixed,
                  std::vector<int>& coordinates, std::vector<int>& ranks) {
  ranks.clear();
  coordinates.resize(grid.count());
  for (std::size_t j = 0; j < grid.count(); ++j) coordinates[j] = std::max(fixed[j], 0);
  // Count through the free coordinates, the last dimension fastest (rank order); done when every
  // free one has wrapped (at once when none is free).
  while (true) {
    ranks.push_back(grid.rank_at(coordinates));
    std::size_t j = grid.count();
    for (; j > 0; --j) {
      const std::size_t k = j - 1;
      if (fixed[k] >= 0) continue;
      if (++coordinates[k] < grid.size(k)) break;
      coordinates[k] = 0;
    }
    if (j == 0) return;
  }
}

// The elements a piece pass's rank receives from it in a step at `level`: the shards left after
// level + 1 splits, each the pass's piece (every shard's piece is as long).
std::int64_t piece_block_elements(const TorusGrid& grid, const TorusPass& pass, int ranks,
                                  std::size_t level) {
  int shards = ranks;
  for (std::size_t l = 0; l <= level; ++l) shards /= grid.size(dimension_at(pass, l));
  const auto [begin, end] = piece_of_shard(pass, ranks, 0);
  return shards * (end - begin);
}

// The elements of the largest message a pass's ranks send at `level`: a range pass's held range
// split level by level (rounded up); a piece pass's block, one message of its shards' pieces.
std::int64_t largest_message_elements(const TorusGrid& grid, const TorusPass& pass, int ranks,
                                      std::size_t level) {
  if (pass.shard_pieces > 0) return piece_block_elements(grid, pass, ranks, level);
  std::int64_t largest = pass.end - pass.begin;
  for (std::size_t l = 0; l <= level; ++l) {
    const int size = grid.size(dimension_at(pass, l));
    largest = (largest + size - 1) / size;
  }
  return largest;
}

// An all-reduce runs both halves; a reduce-scatter only the first, an all-gather only the second.
bool runs_reduce_scatter(CollectiveKind kind) { return kind != CollectiveKind::all_gather; }
bool runs_all_gather(CollectiveKind kind) { return kind != CollectiveKind::reduce_scatter; }

class TorusSteps final : public StepSource {
 public:
  TorusSteps(const CollectiveShape& shape, std::vector<TorusPass> passes)
      : StepSource(shape.ranks, torus_work_elements(shape)),
        grid_(shape.torus_dims),
        passes_(std::move(passes)) {
    const std::size_t count = levels(passes_);
    if (runs_reduce_scatter(shape.kind)) {
      for (std::size_t level = 0; level < count; ++level) phases_.push_back({level, true});
    }
    if (runs_all_gather(shape.kind)) {
      for (std::size_t level = count; level-- > 0;) phases_.push_back({level, false});
    }
    // One pass: each step someone receives the level's largest block. Piece passes: every rank
    // receives one block from each pass in a level's first step. Range passes: walk the steps.
    if (passes_.size() == 1) {
      set_max_received(one_pass_max_received());
    } else if (passes_.front().shard_pieces > 0) {
      set_max_received(piece_passes_max_received());
    } else {
      set_max_received(received_walk(*this));
    }
  }

  std::size_t raw_step_count() const override {
    std::size_t steps = 0;
    for (const Phase& phase : phases_) {
      steps += static_cast<std::size_t>(phase_steps(grid_, passes_, phase.level));
    }
    return steps;
  }

  void raw_step(std::size_t index, std::vector<Transfer>& out) const override {
    out.clear();
    for (const Phase& phase : phases_) {
      const auto steps = static_cast<std::size_t>(phase_steps(grid_, passes_, phase.level));
      if (index < steps) {
        for (const TorusPass& pass : passes_) {
          add_pass_step(pass, phase, static_cast<int>(index), out);
        }
        return;
      }
      index -= steps;
    }
  }

 private:
  struct Phase {
    std::size_t level;  // the passes' level-th dimensions
    bool reducing;      // reduce-scatter (else all-gather)
  };

  // The range a rank of `pass` holds before reduce-scattering its level-th dimension.
  Range held(int rank, const TorusPass& pass, std::size_t level) const {
    Range range{pass.begin, pass.end};
    for (std::size_t l = 0; l < level; ++l) {
      const std::size_t j = dimension_at(pass, l);
      range = block_of(range, grid_.size(j), grid_.coordinate(rank, j));
    }
    return range;
  }

  void add_pass_step(const TorusPass& pass, const Phase& phase, int s,
                     std::vector<Transfer>& out) const {
    const std::size_t j = dimension_at(pass, phase.level);
    const int size = grid_.size(j);
    if (s >= size - 1) return;  // its ring is done; the phase's longest one is not
    const int shift = phase.reducing ? s + 1 : s;
    if (pass.shard_pieces > 0) {
      add_piece_pass_step(pass, phase, shift, out);
      return;
    }
    for (int r = 0; r < ranks(); ++r) {
      const int c = grid_.coordinate(r, j);
      const auto [begin, end] =
          block_of(held(r, pass, phase.level), size, mod(c - pass.direction * shift, size));
      add_transfer(out, Transfer{r, grid_.along(r, j, c + pass.direction), begin, end, begin,
                                 SourceBuffer::work,
                                 phase.reducing ? TransferAction::reduce : TransferAction::copy});
    }
  }

  // A piece pass's block: the shards of the ranks that share the sender's coordinates on the
  // dimensions reduce-scattered before this level and sit at the block's coordinate on this one.
  void add_piece_pass_step(const TorusPass& pass, const Phase& phase, int shift,
                           std::vector<Transfer>& out) const {
    const std::size_t j = dimension_at(pass, phase.level);
    const int size = grid_.size(j);
    const TransferAction action = phase.reducing ? TransferAction::reduce : TransferAction::copy;
    std::vector<int> fixed(grid_.count(), -1), coordinates, shards;
    for (int r = 0; r < ranks(); ++r) {
      for (std::size_t l = 0; l < phase.level; ++l) {
        const std::size_t k = dimension_at(pass, l);
        fixed[k] = grid_.coordinate(r, k);
      }
      const int c = grid_.coordinate(r, j);
      fixed[j] = mod(c - pass.direction * shift, size);
      const int to = grid_.along(r, j, c + pass.direction);
      bool first = true;  // the block's shards go in one message, one range each
      block_shards(grid_, fixed, coordinates, shards);
      for (int q : shards) {
        const auto [begin, end] = piece_of_shard(pass, ranks(), q);
        add_transfer(out, Transfer{r, to, begin, end, begin, SourceBuffer::work, action, !first});
        first = false;
      }
    }
  }

  std::int64_t piece_passes_max_received() const {
    std::int64_t most = 0;
    for (std::size_t level = 0; level < levels(passes_); ++level) {
      std::int64_t received = 0;
      for (const TorusPass& pass : passes_) {
        received += piece_block_elements(grid_, pass, ranks(), level);
      }
      most = std::max(most, received);
    }
    return most;
  }

  std::int64_t one_pass_max_received() const {
    const TorusPass& pass = passes_.front();
    std::int64_t most = 0;
    for (std::size_t level = 0; level < levels(passes_); ++level) {
      if (grid_.size(dimension_at(pass, level)) > 1) {
        most = std::max(most, largest_message_elements(grid_, pass, ranks(), level));
      }
    }
    return most;
  }

  TorusGrid grid_;
  std::vector<TorusPass> passes_;
  std::vector<Phase> phases_;
};

}  // namespace

bool torus_supports(const CollectiveShape& shape) {
  if (!torus_dims_cover(shape.torus_dims, shape.ranks)) return false;
  switch (shape.kind) {
    case CollectiveKind::all_reduce:
    case CollectiveKind::all_gather: return true;
    case CollectiveKind::reduce_scatter: return shape.elements % shape.ranks == 0;
    default: return false;
  }
}

std::int64_t torus_work_elements(const CollectiveShape& shape) {
  return shape.kind == CollectiveKind::all_gather ? shape.ranks * shape.elements : shape.elements;
}

Schedule build_torus_schedule(std::string algorithm_name, const CollectiveShape& shape,
                              const std::vector<TorusPass>& passes) {
  const bool gathers = shape.kind == CollectiveKind::all_gather;
  ScheduleBuilder b(std::move(algorithm_name), shape, shape.elements, torus_work_elements(shape),
                    gathers ? WorkFill::zero : WorkFill::identity);
  const std::int64_t shard = shape.elements / shape.ranks;
  for (int r = 0; r < shape.ranks; ++r) {
    if (gathers) b.set_input_offset(r, r * shape.elements);
    if (shape.kind == CollectiveKind::reduce_scatter) b.set_result(r, r * shard, (r + 1) * shard);
  }
  const TorusSteps steps(shape, passes);
  std::vector<Transfer> transfers;
  for (std::size_t i = 0; i < steps.raw_step_count(); ++i) {
    steps.raw_step(i, transfers);
    for (const Transfer& t : transfers) b.add(i, t);
  }
  return b.build();
}

std::shared_ptr<const StepSource> torus_step_source(const CollectiveShape& shape,
                                                    std::vector<TorusPass> passes) {
  return std::make_shared<TorusSteps>(shape, std::move(passes));
}

// Along a pass's level-th dimension j every step carries, on some line, the largest block of the
// level, ceil(L / dims[j]) of the level's largest range L (a piece pass: its block, one message);
// the all-gather phases repeat the reduce-scatter ones with the same blocks, so an all-reduce
// takes twice a reduce-scatter.
std::int64_t torus_passes_time_ps(const CollectiveShape& shape,
                                  const std::vector<TorusPass>& passes,
                                  std::span<const cost_model::RouteCost> per_dimension) {
  SPMD_CHECK(per_dimension.size() == shape.torus_dims.size(),
             fmt::format("{} link costs for a torus of {} dimensions, expected one per dimension",
                         per_dimension.size(), shape.torus_dims.size()));
  const TorusGrid grid(shape.torus_dims);
  std::int64_t reduce_scatter_ps = 0;
  for (std::size_t level = 0; level < levels(passes); ++level) {
    std::vector<std::int64_t> step_ps(static_cast<std::size_t>(phase_steps(grid, passes, level)),
                                      0);
    for (const TorusPass& pass : passes) {
      const std::size_t j = dimension_at(pass, level);
      const int size = grid.size(j);
      const std::int64_t largest = largest_message_elements(grid, pass, shape.ranks, level);
      const std::int64_t pass_step_ps =
          cost_model::step_time_ps(largest * shape.element_bytes, per_dimension[j].latency_ps,
                                   per_dimension[j].bandwidth_bytes_per_s);
      for (int s = 0; s < size - 1; ++s) {
        step_ps[static_cast<std::size_t>(s)] =
            std::max(step_ps[static_cast<std::size_t>(s)], pass_step_ps);
      }
    }
    for (std::int64_t ps : step_ps) reduce_scatter_ps += ps;
  }
  return shape.kind == CollectiveKind::all_reduce ? 2 * reduce_scatter_ps : reduce_scatter_ps;
}

std::vector<RankPair> torus_neighbour_pairs(const TorusGrid& grid, std::size_t j, int direction) {
  std::vector<RankPair> pairs;
  if (grid.size(j) < 2) return pairs;
  int ranks = 1;
  for (std::size_t k = 0; k < grid.count(); ++k) ranks *= grid.size(k);
  for (int r = 0; r < ranks; ++r) {
    pairs.emplace_back(r, grid.along(r, j, grid.coordinate(r, j) + direction));
  }
  return pairs;
}

}  // namespace spmd::collectives
