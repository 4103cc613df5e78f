#pragma once
// Argument checks and small helpers shared by the topology constructors.

#include <string>
#include <vector>

#include "topology/topology.h"

namespace spmd::topology {

void check_device(const Topology& topology, int device, const char* role);
void check_link_spec(const LinkSpec& link, const std::string& where);
void check_count(int value, const std::string& where, int minimum);
std::vector<int> identity_order(int n);  // 0, 1, ..., n-1

// Whether a route round a ring of `size` positions from `position` to the one `ahead` steps
// forward goes forward: the shorter way, and from exactly half way round forward from an even
// position and backward from an odd one, so that an all-to-all loads both directions of every
// link alike (on a ring of two both ways are the one link: forward).
inline bool goes_forward_round(int position, int ahead, int size) {
  const int behind = size - ahead;
  if (size > 2 && ahead == behind) return position % 2 == 0;
  return ahead <= behind;
}

}  // namespace spmd::topology
