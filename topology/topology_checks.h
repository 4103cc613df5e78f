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

}  // namespace spmd::topology
