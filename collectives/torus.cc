// Torus: the group is a row-major grid over shape.torus_dims (last dimension fastest). Dimensions
// are reduce-scattered last first: along dimension j each rank's current range is split evenly
// into dims[j] blocks, and block b is reduced along every line as on a ring (starting at
// coordinate b + 1, receiver's value + received, ending at b), which then keeps block b. Then
// the blocks are all-gathered back, dimension 0 first. All lines of a dimension run together.

#include <fmt/format.h>

#include "collectives/algorithm_parts.h"
#include "collectives/ring_parts.h"
#include "collectives/schedule_builder.h"
#include "cost_model/step_time.h"
#include "reference/check.h"

namespace spmd::collectives {
namespace {

using Range = std::pair<std::int64_t, std::int64_t>;  // [begin, end)

bool dims_fit(const CollectiveShape& shape) {
  if (shape.torus_dims.empty()) return false;
  std::int64_t product = 1;
  for (int d : shape.torus_dims) {
    if (d < 1) return false;
    product *= d;
  }
  return product == shape.ranks;
}

bool supports(const CollectiveShape& shape) {
  return shape.kind == CollectiveKind::all_reduce && dims_fit(shape);
}

class Grid {
 public:
  explicit Grid(std::vector<int> dims) : dims_(std::move(dims)) {}
  int size(std::size_t j) const { return dims_[j]; }
  std::size_t count() const { return dims_.size(); }
  int stride(std::size_t j) const {
    int s = 1;
    for (std::size_t k = j + 1; k < dims_.size(); ++k) s *= dims_[k];
    return s;
  }
  int coordinate(int rank, std::size_t j) const { return rank / stride(j) % dims_[j]; }
  // The rank on the same line along j at coordinate c.
  int along(int rank, std::size_t j, std::int64_t c) const {
    const int size = dims_[j];
    const int wrapped = static_cast<int>(((c % size) + size) % size);
    return rank + (wrapped - coordinate(rank, j)) * stride(j);
  }

 private:
  std::vector<int> dims_;
};

Range block_of(Range range, int parts, int b) {
  const std::int64_t length = range.second - range.first;
  return {range.first + even_split_begin(length, parts, b),
          range.first + even_split_begin(length, parts, b + 1)};
}

Schedule build(const CollectiveShape& shape) {
  const int n = shape.ranks;
  const Grid grid(shape.torus_dims);
  ScheduleBuilder b("torus", shape, shape.elements, shape.elements, WorkFill::identity);
  // ranges[level][rank]: the range a rank holds before reduce-scattering dimension count-1-level.
  std::vector<std::vector<Range>> ranges{
      std::vector<Range>(static_cast<std::size_t>(n), {0, shape.elements})};
  std::size_t step = 0;
  for (std::size_t level = 0; level < grid.count(); ++level) {
    const std::size_t j = grid.count() - 1 - level;
    const int size = grid.size(j);
    const std::vector<Range>& held = ranges.back();
    for (int s = 0; s + 1 < size; ++s, ++step) {
      for (int r = 0; r < n; ++r) {
        // Rank r, at coordinate c, passes on the block that started at coordinate c - s.
        const int c = grid.coordinate(r, j);
        const int block = ((c - s - 1) % size + size) % size;
        const auto [begin, end] = block_of(held[static_cast<std::size_t>(r)], size, block);
        b.add(step, Transfer{r, grid.along(r, j, c + 1), begin, end, begin, SourceBuffer::work,
                             TransferAction::reduce});
      }
    }
    std::vector<Range> next(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      next[static_cast<std::size_t>(r)] =
          block_of(held[static_cast<std::size_t>(r)], size, grid.coordinate(r, j));
    }
    ranges.push_back(std::move(next));
  }
  for (std::size_t j = 0; j < grid.count(); ++j) {
    const std::size_t level = grid.count() - 1 - j;
    const std::vector<Range>& parent = ranges[level];
    const int size = grid.size(j);
    for (int s = 0; s + 1 < size; ++s, ++step) {
      for (int r = 0; r < n; ++r) {
        const int c = grid.coordinate(r, j);
        const int block = ((c - s) % size + size) % size;
        const auto [begin, end] = block_of(parent[static_cast<std::size_t>(r)], size, block);
        b.add(step, Transfer{r, grid.along(r, j, c + 1), begin, end, begin, SourceBuffer::work,
                             TransferAction::copy});
      }
    }
  }
  return b.build();
}

// The same steps one at a time. Step i belongs to one dimension's reduce-scatter or all-gather
// (`phases_`, in order); a rank's held range at a level is recomputed from its coordinates.
// Every rank receives one block a step, from its predecessor on the line.
class TorusSteps final : public StepSource {
 public:
  explicit TorusSteps(const CollectiveShape& shape)
      : StepSource(shape.ranks, shape.elements), grid_(shape.torus_dims), elements_(shape.elements) {
    const std::size_t count = grid_.count();
    for (std::size_t level = 0; level < count; ++level) {
      phases_.push_back({count - 1 - level, level, true});
    }
    for (std::size_t j = 0; j < count; ++j) phases_.push_back({j, count - 1 - j, false});
    std::int64_t largest = shape.elements, most = 0;
    for (std::size_t level = 0; level < count; ++level) {
      const int size = grid_.size(count - 1 - level);
      largest = (largest + size - 1) / size;
      if (size > 1) most = std::max(most, largest);
    }
    set_max_received(most);
  }

  std::size_t raw_step_count() const override {
    std::size_t steps = 0;
    for (const Phase& phase : phases_) steps += static_cast<std::size_t>(grid_.size(phase.dim) - 1);
    return steps;
  }

  void raw_step(std::size_t index, std::vector<Transfer>& out) const override {
    out.clear();
    for (const Phase& phase : phases_) {
      const auto steps = static_cast<std::size_t>(grid_.size(phase.dim) - 1);
      if (index < steps) return phase_step(phase, static_cast<int>(index), out);
      index -= steps;
    }
  }

 private:
  struct Phase {
    std::size_t dim;    // the dimension its lines run along
    std::size_t level;  // its ranges are those held before reduce-scattering level `level`
    bool reducing;      // reduce-scatter (else all-gather)
  };

  // ranges[level][rank] of build, for one rank.
  Range held(int rank, std::size_t level) const {
    Range range{0, elements_};
    for (std::size_t l = 0; l < level; ++l) {
      const std::size_t j = grid_.count() - 1 - l;
      range = block_of(range, grid_.size(j), grid_.coordinate(rank, j));
    }
    return range;
  }

  // Rank r, at coordinate c, passes on block c - s - 1 (reduce-scatter) or c - s (all-gather).
  void phase_step(const Phase& phase, int s, std::vector<Transfer>& out) const {
    const int size = grid_.size(phase.dim);
    for (int r = 0; r < ranks(); ++r) {
      const int c = grid_.coordinate(r, phase.dim);
      const int shift = phase.reducing ? s + 1 : s;
      const int block = ((c - shift) % size + size) % size;
      const auto [begin, end] = block_of(held(r, phase.level), size, block);
      add_transfer(out, Transfer{r, grid_.along(r, phase.dim, c + 1), begin, end, begin,
                                 SourceBuffer::work,
                                 phase.reducing ? TransferAction::reduce : TransferAction::copy});
    }
  }

  Grid grid_;
  std::int64_t elements_;
  std::vector<Phase> phases_;
};

std::shared_ptr<const StepSource> steps(const CollectiveShape& shape) {
  return std::make_shared<TorusSteps>(shape);
}

ReductionOrder order(const CollectiveShape& shape) {
  ReductionOrder torus = ring_chunked_order(ReductionAlgorithm::torus, shape);
  torus.torus_dims = shape.torus_dims;
  return torus;
}

// Dimension j's steps each carry the largest block of that level, both ways (reduce-scatter and
// all-gather): ceil(L / dims[j]) of the level's largest range L; they cross dimension j's links.
std::int64_t phased_time_ps(const CollectiveShape& shape,
                            std::span<const cost_model::RouteCost> per_dimension) {
  if (!dims_fit(shape)) return 0;
  SPMD_CHECK(per_dimension.size() == shape.torus_dims.size(),
             fmt::format("{} link costs for a torus of {} dimensions, expected one per dimension",
                         per_dimension.size(), shape.torus_dims.size()));
  std::int64_t largest = shape.elements;
  std::int64_t total = 0;
  for (std::size_t level = 0; level < shape.torus_dims.size(); ++level) {
    const std::size_t j = shape.torus_dims.size() - 1 - level;
    const int size = shape.torus_dims[j];
    const std::int64_t block = (largest + size - 1) / size;
    const cost_model::RouteCost& link = per_dimension[j];
    total += 2 * (size - 1) *
             cost_model::step_time_ps(block * shape.element_bytes, link.latency_ps,
                                      link.bandwidth_bytes_per_s);
    largest = block;
  }
  return total;
}

std::int64_t time_ps(const CollectiveShape& shape, std::int64_t latency_ps,
                     std::int64_t bandwidth_bytes_per_s) {
  const std::vector<cost_model::RouteCost> uniform(shape.torus_dims.size(),
                                                   {latency_ps, bandwidth_bytes_per_s});
  return phased_time_ps(shape, uniform);
}

// One phase per dimension: every rank to the next along it (none for a dimension of size 1).
std::vector<std::vector<RankPair>> link_phases(const CollectiveShape& shape) {
  const Grid grid(shape.torus_dims);
  std::vector<std::vector<RankPair>> phases(grid.count());
  for (std::size_t j = 0; j < grid.count(); ++j) {
    if (grid.size(j) < 2) continue;
    for (int r = 0; r < shape.ranks; ++r) {
      phases[j].emplace_back(r, grid.along(r, j, grid.coordinate(r, j) + 1));
    }
  }
  return phases;
}

}  // namespace

const AlgorithmParts& torus_parts() {
  static const AlgorithmParts parts{supports,     build,       steps,         order, time_ps,
                                    std::nullopt, link_phases, phased_time_ps};
  return parts;
}

}  // namespace spmd::collectives
