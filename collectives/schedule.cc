#include "collectives/schedule.h"

#include <algorithm>

#include "reference/error.h"

namespace spmd::collectives {
namespace {

// Messages are built only on failure: validation runs on every schedule, and a large schedule
// has millions of transfers.
std::string where(std::size_t step, std::size_t index) {
  return "schedule step " + std::to_string(step) + " transfer " + std::to_string(index);
}

void validate_transfer(const Schedule& s, const Transfer& t, std::size_t step,
                       std::size_t index) {
  const auto in_ranks = [&](int r) { return r >= 0 && r < s.ranks; };
  if (!in_ranks(t.source) || !in_ranks(t.destination)) {
    throw Error(where(step, index) + ": source " + std::to_string(t.source) + " / destination " +
                std::to_string(t.destination) + ", expected ranks in 0.." +
                std::to_string(s.ranks - 1));
  }
  const std::int64_t from_size =
      t.from == SourceBuffer::input ? s.input_elements : s.work_elements;
  if (t.begin < 0 || t.begin > t.end || t.end > from_size) {
    throw Error(where(step, index) + ": range [" + std::to_string(t.begin) + ", " +
                std::to_string(t.end) + "), expected inside a source buffer of " +
                std::to_string(from_size));
  }
  if (t.dest_begin < 0 || t.dest_begin + t.elements() > s.work_elements) {
    throw Error(where(step, index) + ": destination start " + std::to_string(t.dest_begin) +
                " for " + std::to_string(t.elements()) +
                " elements, expected inside a work buffer of " + std::to_string(s.work_elements));
  }
}

}  // namespace

void Schedule::validate() const {
  const auto n = static_cast<std::size_t>(ranks);
  if (ranks < 1) throw Error("schedule ranks " + std::to_string(ranks) + ", expected >= 1");
  if (input_offset.size() != n || result_begin.size() != n || result_end.size() != n) {
    throw Error("schedule per-rank vectors have sizes " + std::to_string(input_offset.size()) +
                "/" + std::to_string(result_begin.size()) + "/" +
                std::to_string(result_end.size()) + ", expected " + std::to_string(n) + " each");
  }
  for (std::size_t r = 0; r < n; ++r) {
    const auto what = [r] { return "schedule rank " + std::to_string(r); };
    if (input_offset[r] >= 0 && input_offset[r] + input_elements > work_elements) {
      throw Error(what() + ": input offset " + std::to_string(input_offset[r]) +
                  ", expected the input to fit in the work buffer");
    }
    if (result_begin[r] < 0 || result_begin[r] > result_end[r] || result_end[r] > work_elements) {
      throw Error(what() + ": result range outside the work buffer");
    }
  }
  for (std::size_t s = 0; s < steps.size(); ++s) {
    for (std::size_t i = 0; i < steps[s].transfers.size(); ++i) {
      validate_transfer(*this, steps[s].transfers[i], s, i);
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
