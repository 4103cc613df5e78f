#pragma once
// What each device holds in memory over virtual time: every buffer a program or a collective
// holds (inputs, work buffers, received chunks, outputs), the bytes in use, the peak, and a
// timeline. Going over capacity raises an out-of-memory error naming the device, the operation,
// the bytes requested, the bytes in use and the capacity.

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace spmd::sim {

struct MemoryPoint {
  std::int64_t time_ps = 0;
  std::int64_t bytes_in_use = 0;
};

class MemoryLedger {
 public:
  // Each device's timeline keeps at most `max_timeline_points` points (the peak stays exact).
  MemoryLedger(int devices, std::int64_t capacity_bytes,
               std::size_t max_timeline_points = std::numeric_limits<std::size_t>::max());

  // Adds `bytes` to the device's use at `time_ps`; throws spmd::OutOfMemoryError if that passes
  // the capacity. `what` names the operation ("psum('i') work buffer").
  void allocate(int device, std::int64_t bytes, std::int64_t time_ps, const std::string& what);
  // The same, with `what` built only for an error: collectives allocate on every device at every
  // start, and formatting their names there took a tenth of a large simulation's time.
  void allocate(int device, std::int64_t bytes, std::int64_t time_ps,
                const std::function<std::string()>& what);
  // Releasing more than the device holds is a bug (spmd::InternalError): use never goes negative.
  void release(int device, std::int64_t bytes, std::int64_t time_ps);

  std::int64_t capacity_bytes() const { return capacity_bytes_; }
  std::int64_t in_use_bytes(int device) const { return in_use_[static_cast<std::size_t>(device)]; }
  std::int64_t peak_bytes(int device) const { return peak_[static_cast<std::size_t>(device)]; }
  // Bytes in use after each change, in time order (one point per time: the last change wins),
  // up to the limit; whether changes past it were left out.
  const std::vector<MemoryPoint>& timeline(int device) const {
    return timelines_[static_cast<std::size_t>(device)];
  }
  bool timeline_truncated(int device) const {
    return truncated_[static_cast<std::size_t>(device)] != 0;
  }

 private:
  void record(int device, std::int64_t time_ps);

  std::int64_t capacity_bytes_;
  std::vector<std::int64_t> in_use_;
  std::vector<std::int64_t> peak_;
  std::size_t max_timeline_points_;
  std::vector<std::vector<MemoryPoint>> timelines_;
  std::vector<char> truncated_;  // by device (char: vector<bool> is not a container)
};

}  // namespace spmd::sim
