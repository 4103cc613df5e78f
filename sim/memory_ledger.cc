#include "sim/memory_ledger.h"

#include <fmt/format.h>

#include "reference/check.h"
#include "sim/sim_errors.h"

namespace spmd::sim {

MemoryLedger::MemoryLedger(int devices, std::int64_t capacity_bytes,
                           std::size_t max_timeline_points)
    : capacity_bytes_(capacity_bytes),
      in_use_(static_cast<std::size_t>(devices), 0),
      peak_(static_cast<std::size_t>(devices), 0),
      max_timeline_points_(max_timeline_points),
      timelines_(static_cast<std::size_t>(devices)),
      truncated_(static_cast<std::size_t>(devices), 0) {}

void MemoryLedger::allocate(int device, std::int64_t bytes, std::int64_t time_ps,
                            const std::string& what) {
  allocate(device, bytes, time_ps, [&what] { return what; });
}

void MemoryLedger::allocate(int device, std::int64_t bytes, std::int64_t time_ps,
                            const std::function<std::string()>& what) {
  const auto d = static_cast<std::size_t>(device);
  SPMD_CHECK(bytes >= 0, fmt::format("memory ledger: device {} allocates {} bytes in {}", device,
                                     bytes, what()));
  if (in_use_[d] + bytes > capacity_bytes_) {
    throw OutOfMemoryError(fmt::format(
        "out of memory on device {} at t={} ps in {}: requested {} bytes with {} in use of a "
        "capacity of {} bytes",
        device, time_ps, what(), bytes, in_use_[d], capacity_bytes_));
  }
  in_use_[d] += bytes;
  if (in_use_[d] > peak_[d]) peak_[d] = in_use_[d];
  record(device, time_ps);
}

void MemoryLedger::release(int device, std::int64_t bytes, std::int64_t time_ps) {
  const auto d = static_cast<std::size_t>(device);
  // Never negative: a release matches an allocation (the program's own releases are checked as
  // input by SimRun::release_memory first).
  SPMD_CHECK(bytes >= 0 && bytes <= in_use_[d],
             fmt::format("memory ledger: device {} releases {} bytes with {} bytes in use", device,
                         bytes, in_use_[d]));
  in_use_[d] -= bytes;
  record(device, time_ps);
}

void MemoryLedger::record(int device, std::int64_t time_ps) {
  auto& timeline = timelines_[static_cast<std::size_t>(device)];
  const std::int64_t bytes = in_use_[static_cast<std::size_t>(device)];
  if (!timeline.empty() && timeline.back().time_ps == time_ps) {
    if (!truncated_[static_cast<std::size_t>(device)]) timeline.back().bytes_in_use = bytes;
  } else if (timeline.size() < max_timeline_points_) {
    timeline.push_back({time_ps, bytes});
  } else {
    truncated_[static_cast<std::size_t>(device)] = 1;
  }
}

}  // namespace spmd::sim
