#pragma once
// A ring over a group: ring position <-> group rank. The reference's ring orders (NCCL's ring and
// chain, the simulator's trees and rings) and the schedules in collectives/ walk the same rings
// through it. Positions are taken mod n, so walking past the end goes round again.

#include <cstdint>
#include <span>
#include <vector>

namespace spmd {

class RingOrder {
 public:
  // ring[p] is the rank at position p; empty means 0, 1, ..., group_size - 1. Throws
  // spmd::Error unless ring is a permutation of 0..group_size-1.
  RingOrder(const std::vector<int>& ring, int group_size);

  int size() const { return static_cast<int>(ranks_.size()); }
  int rank_at(std::int64_t position) const;
  int position_of(int rank) const { return positions_[static_cast<std::size_t>(rank)]; }
  // The n ranks at positions first, first + step, first + 2 step, ...
  std::vector<int> walk(std::int64_t first, int step) const;
  // The same ring walked the other way: position p holds rank_at(-p).
  RingOrder reversed() const;
  // Position p holds rank_at(n - 1 - p): a tree over it has its root where this ring's last
  // position is (NCCL's double binary tree has the same aim).
  RingOrder mirrored() const;

 private:
  std::vector<int> ranks_, positions_;
};

// A ring over devices (position -> device id) that knows each device's position, so that the ring
// of a group of g devices costs O(g log g), not a walk over the whole ring.
class DeviceRing {
 public:
  DeviceRing() = default;
  explicit DeviceRing(std::vector<int> devices);

  // The group's ranks (rank r = group_devices[r]) in the order the ring visits their devices;
  // ranks whose device the ring does not visit are left out.
  std::vector<int> group_ring(std::span<const int> group_devices) const;

 private:
  std::vector<int> position_;  // by device id; -1: not on the ring
};

// The ring of a group, from a ring over devices: the group's ranks (rank r = group_devices[r]) in
// the order `device_ring` visits their devices. Ranks whose device the ring does not visit are
// left out, so the result is shorter than the group when the ring misses one of its devices.
std::vector<int> group_ring(std::span<const int> device_ring, std::span<const int> group_devices);

}  // namespace spmd
