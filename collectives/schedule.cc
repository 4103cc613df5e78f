#include "collectives/schedule.h"

#include <fmt/format.h>

#include <algorithm>

#include "reference/check.h"

namespace spmd::collectives {
namespace {

// Messages are built only on failure (SPMD_CHECK): validation runs on every schedule, and a large
// schedule has millions of transfers.
void validate_transfer(const Schedule& s, const Transfer& t, std::size_t step, std::size_t index) {
  const auto in_ranks = [&](int r) { return r >= 0 && r < s.ranks; };
  SPMD_CHECK(in_ranks(t.source) && in_ranks(t.destination),
             fmt::format("schedule step {} transfer {}: source {} / destination {}, expected "
                         "ranks in 0..{}",
                         step, index, t.source, t.destination, s.ranks - 1));
  const std::int64_t from_size = t.from == SourceBuffer::input ? s.input_elements : s.work_elements;
  SPMD_CHECK(t.begin >= 0 && t.begin <= t.end && t.end <= from_size,
             fmt::format("schedule step {} transfer {}: range [{}, {}), expected inside a source "
                         "buffer of {}",
                         step, index, t.begin, t.end, from_size));
  SPMD_CHECK(t.dest_begin >= 0 && t.dest_begin + t.elements() <= s.work_elements,
             fmt::format("schedule step {} transfer {}: destination start {} for {} elements, "
                         "expected inside a work buffer of {}",
                         step, index, t.dest_begin, t.elements(), s.work_elements));
}

}  // namespace

// An algorithm's schedule is checked before it is used; one that breaks the data model is a bug
// in the algorithm (spmd::InternalError), not bad input.
void Schedule::validate() const {
  const auto n = static_cast<std::size_t>(ranks);
  SPMD_CHECK(ranks >= 1, fmt::format("schedule ranks {}, expected >= 1", ranks));
  SPMD_CHECK(input_offset.size() == n && result_begin.size() == n && result_end.size() == n,
             fmt::format("schedule per-rank vectors have sizes {}/{}/{}, expected {} each",
                         input_offset.size(), result_begin.size(), result_end.size(), n));
  for (std::size_t r = 0; r < n; ++r) {
    SPMD_CHECK(input_offset[r] < 0 || input_offset[r] + input_elements <= work_elements,
               fmt::format("schedule rank {}: input offset {}, expected the input to fit in the "
                           "work buffer",
                           r, input_offset[r]));
    SPMD_CHECK(
        result_begin[r] >= 0 && result_begin[r] <= result_end[r] && result_end[r] <= work_elements,
        fmt::format("schedule rank {}: result range outside the work buffer", r));
  }
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const std::vector<Transfer>& transfers = steps[s].transfers;
    for (std::size_t i = 0; i < transfers.size(); ++i) {
      validate_transfer(*this, transfers[i], s, i);
      SPMD_CHECK(
          !transfers[i].same_message || (i > 0 && transfers[i - 1].source == transfers[i].source &&
                                         transfers[i - 1].destination == transfers[i].destination),
          fmt::format("schedule step {} transfer {}: in the message of the transfer before "
                      "it, expected one with the same source and destination",
                      s, i));
    }
  }
}

std::size_t Schedule::transfer_count() const {
  std::size_t count = 0;
  for (const Step& step : steps) count += step.transfers.size();
  return count;
}

std::int64_t Schedule::max_received_elements_per_step() const {
  std::int64_t most = 0;
  std::vector<std::int64_t> received(static_cast<std::size_t>(ranks), 0);
  for (const Step& step : steps) {
    std::fill(received.begin(), received.end(), 0);
    for (const Transfer& t : step.transfers) {
      if (t.source == t.destination) continue;
      auto& r = received[static_cast<std::size_t>(t.destination)];
      r += t.elements();
      most = std::max(most, r);
    }
  }
  return most;
}

}  // namespace spmd::collectives
