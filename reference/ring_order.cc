#include "reference/ring_order.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstddef>

#include "reference/error.h"

namespace spmd {

RingOrder::RingOrder(const std::vector<int>& ring, int group_size) : ranks_(ring) {
  if (ranks_.empty()) {
    for (int r = 0; r < group_size; ++r) ranks_.push_back(r);
  }
  bool permutation = static_cast<int>(ranks_.size()) == group_size;
  positions_.assign(static_cast<std::size_t>(std::max(group_size, 0)), -1);
  for (std::size_t p = 0; permutation && p < ranks_.size(); ++p) {
    const int r = ranks_[p];
    permutation = r >= 0 && r < group_size && positions_[static_cast<std::size_t>(r)] < 0;
    if (permutation) positions_[static_cast<std::size_t>(r)] = static_cast<int>(p);
  }
  if (!permutation) {
    throw Error(fmt::format("ring {} for group size {}, expected a permutation of 0..{}",
                            fmt::join(ring, ","), group_size, group_size - 1));
  }
}

int RingOrder::rank_at(std::int64_t position) const {
  const auto n = static_cast<std::int64_t>(ranks_.size());
  return ranks_[static_cast<std::size_t>(((position % n) + n) % n)];
}

std::vector<int> RingOrder::walk(std::int64_t first, int step) const {
  std::vector<int> ranks;
  for (int k = 0; k < size(); ++k) ranks.push_back(rank_at(first + std::int64_t{k} * step));
  return ranks;
}

RingOrder RingOrder::reversed() const { return RingOrder(walk(0, -1), size()); }

RingOrder RingOrder::mirrored() const { return RingOrder(walk(size() - 1, -1), size()); }

DeviceRing::DeviceRing(std::vector<int> devices) {
  int largest = -1;
  for (int device : devices) largest = std::max(largest, device);
  position_.assign(static_cast<std::size_t>(largest + 1), -1);
  for (std::size_t p = 0; p < devices.size(); ++p) {
    position_[static_cast<std::size_t>(devices[p])] = static_cast<int>(p);
  }
}

std::vector<int> DeviceRing::group_ring(std::span<const int> group_devices) const {
  std::vector<std::pair<int, int>> by_position;  // (ring position, rank)
  for (std::size_t rank = 0; rank < group_devices.size(); ++rank) {
    const auto device = static_cast<std::size_t>(group_devices[rank]);
    if (device < position_.size() && position_[device] >= 0) {
      by_position.emplace_back(position_[device], static_cast<int>(rank));
    }
  }
  std::sort(by_position.begin(), by_position.end());
  std::vector<int> ranks;
  ranks.reserve(by_position.size());
  for (const auto& [position, rank] : by_position) ranks.push_back(rank);
  return ranks;
}

std::vector<int> group_ring(std::span<const int> device_ring, std::span<const int> group_devices) {
  return DeviceRing({device_ring.begin(), device_ring.end()}).group_ring(group_devices);
}

}  // namespace spmd
