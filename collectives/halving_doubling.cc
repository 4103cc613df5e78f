// Recursive halving-doubling over a power-of-two group: halving by distance n/2, n/4, ..., 1
// (partners r and r + d; the lower keeps the lower half of the current range, and each kept half
// becomes lower partial + higher partial), then doubling back by distance 1, 2, ..., n/2.
// Reduce-scatter stops after the halving (rank r then holds block r); all-gather is the doubling.

#include <bit>

#include "collectives/algorithm_parts.h"
#include "collectives/schedule_builder.h"
#include "cost_model/step_time.h"

namespace spmd::collectives {
namespace {

using Range = std::pair<std::int64_t, std::int64_t>;  // [begin, end)

bool supports(const CollectiveShape& shape) {
  if (!std::has_single_bit(static_cast<unsigned>(shape.ranks))) return false;
  switch (shape.kind) {
    case CollectiveKind::all_reduce:
    case CollectiveKind::all_gather: return true;
    case CollectiveKind::reduce_scatter: return shape.elements % shape.ranks == 0;
    default: return false;
  }
}

int levels(int n) { return std::countr_zero(static_cast<unsigned>(n)); }
int distance(int n, int level) { return n >> (level + 1); }  // n/2, n/4, ..., 1

// Every rank's range before each halving level and after the last: ranges[level][rank].
std::vector<std::vector<Range>> halving_ranges(int n, std::int64_t count) {
  std::vector<std::vector<Range>> ranges{
      std::vector<Range>(static_cast<std::size_t>(n), {0, count})};
  for (int level = 0; level < levels(n); ++level) {
    const int d = distance(n, level);
    std::vector<Range> next = ranges.back();
    for (int r = 0; r < n; ++r) {
      const auto [begin, end] = ranges.back()[static_cast<std::size_t>(r)];
      const std::int64_t mid = begin + (end - begin) / 2;
      next[static_cast<std::size_t>(r)] = (r & d) == 0 ? Range{begin, mid} : Range{mid, end};
    }
    ranges.push_back(std::move(next));
  }
  return ranges;
}

void add_halving(ScheduleBuilder& b, int n, const std::vector<std::vector<Range>>& ranges) {
  for (int level = 0; level < levels(n); ++level) {
    const int d = distance(n, level);
    for (int r = 0; r < n; ++r) {
      const int partner = r ^ d;
      const auto [begin, end] =
          ranges[static_cast<std::size_t>(level + 1)][static_cast<std::size_t>(partner)];
      // The lower rank's partial goes on the left of every sum.
      const TransferAction action =
          (partner & d) == 0 ? TransferAction::reduce : TransferAction::reduce_received_left;
      b.add(static_cast<std::size_t>(level),
            Transfer{r, partner, begin, end, begin, SourceBuffer::work, action});
    }
  }
}

// Doubling back: at each level every rank sends what it holds to its partner.
void add_doubling(ScheduleBuilder& b, int n, const std::vector<std::vector<Range>>& ranges,
                  std::size_t first_step) {
  for (int k = 0; k < levels(n); ++k) {
    const int level = levels(n) - 1 - k;  // distance 1 first
    const int d = distance(n, level);
    for (int r = 0; r < n; ++r) {
      const auto [begin, end] =
          ranges[static_cast<std::size_t>(level + 1)][static_cast<std::size_t>(r)];
      b.add(first_step + static_cast<std::size_t>(k),
            Transfer{r, r ^ d, begin, end, begin, SourceBuffer::work, TransferAction::copy});
    }
  }
}

Schedule build(const CollectiveShape& shape) {
  const int n = shape.ranks;
  const std::int64_t e = shape.elements;
  if (shape.kind == CollectiveKind::all_gather) {
    ScheduleBuilder b("halving_doubling", shape, e, n * e, WorkFill::zero);
    for (int r = 0; r < n; ++r) b.set_input_offset(r, r * e);
    add_doubling(b, n, halving_ranges(n, n * e), 0);
    return b.build();
  }
  ScheduleBuilder b("halving_doubling", shape, e, e, WorkFill::identity);
  const auto ranges = halving_ranges(n, e);
  add_halving(b, n, ranges);
  if (shape.kind == CollectiveKind::reduce_scatter) {
    for (int r = 0; r < n; ++r) {
      const auto [begin, end] = ranges.back()[static_cast<std::size_t>(r)];
      b.set_result(r, begin, end);
    }
  } else {
    add_doubling(b, n, ranges, static_cast<std::size_t>(levels(n)));
  }
  return b.build();
}

// Rank r's range after `level` halving levels (halving_ranges()[level][r]) without the table: each
// level keeps the half that bit `distance` of r picks.
Range range_after(int n, std::int64_t count, int level, int r) {
  Range range{0, count};
  for (int l = 0; l < level; ++l) {
    const std::int64_t mid = range.first + (range.second - range.first) / 2;
    range = (r & distance(n, l)) == 0 ? Range{range.first, mid} : Range{mid, range.second};
  }
  return range;
}

// The same steps one at a time: halving levels first (not for all-gather), then doubling (not
// for reduce-scatter). Every rank receives one range a step, the largest being half of all.
class HalvingDoublingSteps final : public StepSource {
 public:
  explicit HalvingDoublingSteps(const CollectiveShape& shape)
      : StepSource(shape.ranks, buffer_elements(shape)), shape_(without_ring(shape)) {
    const std::int64_t count = buffer_elements(shape);
    set_max_received(levels(shape.ranks) > 0 ? count - count / 2 : 0);
  }

  std::size_t raw_step_count() const override {
    const auto l = static_cast<std::size_t>(levels(shape_.ranks));
    return shape_.kind == CollectiveKind::all_reduce ? 2 * l : l;
  }

  void raw_step(std::size_t index, std::vector<Transfer>& out) const override {
    out.clear();
    const int l = levels(shape_.ranks);
    const bool halving = shape_.kind != CollectiveKind::all_gather && static_cast<int>(index) < l;
    if (halving) {
      halving_step(static_cast<int>(index), out);
    } else {
      const int k = shape_.kind == CollectiveKind::all_gather ? static_cast<int>(index)
                                                              : static_cast<int>(index) - l;
      doubling_step(k, out);
    }
  }

 private:
  static std::int64_t buffer_elements(const CollectiveShape& shape) {
    return shape.kind == CollectiveKind::all_gather ? shape.ranks * shape.elements
                                                    : shape.elements;
  }

  void halving_step(int level, std::vector<Transfer>& out) const {
    const int n = shape_.ranks, d = distance(n, level);
    for (int r = 0; r < n; ++r) {
      const int partner = r ^ d;
      const auto [begin, end] = range_after(n, work_elements(), level + 1, partner);
      const TransferAction action =
          (partner & d) == 0 ? TransferAction::reduce : TransferAction::reduce_received_left;
      add_transfer(out, Transfer{r, partner, begin, end, begin, SourceBuffer::work, action});
    }
  }

  void doubling_step(int k, std::vector<Transfer>& out) const {
    const int n = shape_.ranks, level = levels(n) - 1 - k, d = distance(n, level);
    for (int r = 0; r < n; ++r) {
      const auto [begin, end] = range_after(n, work_elements(), level + 1, r);
      add_transfer(out, Transfer{r, r ^ d, begin, end, begin, SourceBuffer::work,
                                 TransferAction::copy});
    }
  }

  CollectiveShape shape_;
};

std::shared_ptr<const StepSource> steps(const CollectiveShape& shape) {
  return std::make_shared<HalvingDoublingSteps>(shape);
}

ReductionOrder order(const CollectiveShape&) {
  return {.algorithm = ReductionAlgorithm::halving_doubling};
}

// Halving level k sends half of each range: the larger half of the largest range at that level.
// Doubling sends the ranges back, level by level.
std::int64_t time_ps(const CollectiveShape& shape, std::int64_t latency_ps,
                     std::int64_t bandwidth_bytes_per_s) {
  const int n = shape.ranks;
  const bool gather = shape.kind == CollectiveKind::all_gather;
  std::int64_t largest = gather ? n * shape.elements : shape.elements;
  std::vector<std::int64_t> halving;
  for (int level = 0; level < levels(n); ++level) {
    const std::int64_t upper_half = largest - largest / 2;
    halving.push_back(upper_half * shape.element_bytes);
    largest = upper_half;
  }
  std::vector<std::int64_t> bytes;
  if (!gather) bytes = halving;
  if (shape.kind != CollectiveKind::reduce_scatter)
    bytes.insert(bytes.end(), halving.rbegin(), halving.rend());
  return cost_model::steps_time_ps(bytes, latency_ps, bandwidth_bytes_per_s);
}

}  // namespace

const AlgorithmParts& halving_doubling_parts() {
  static const AlgorithmParts parts{supports, build, steps, order, time_ps,
                                    ReductionAlgorithm::halving_doubling};
  return parts;
}

}  // namespace spmd::collectives
