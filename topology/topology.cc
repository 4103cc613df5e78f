#include "topology/topology.h"

#include "reference/error.h"

namespace spmd::topology {

int Topology::add_link(int from, int to, LinkSpec spec, std::string label) {
  links_.push_back(Link{from, to, spec, std::move(label)});
  return static_cast<int>(links_.size()) - 1;
}

void check_device(const Topology& topology, int device, const char* role) {
  if (device < 0 || device >= topology.device_count()) {
    throw Error(topology.name() + " route: " + role + " device " + std::to_string(device) +
                ", expected 0.." + std::to_string(topology.device_count() - 1));
  }
}

void check_link_spec(const LinkSpec& link, const std::string& where) {
  if (link.bandwidth_bytes_per_s <= 0) {
    throw Error(where + ": bandwidth " + std::to_string(link.bandwidth_bytes_per_s) +
                " bytes/s, expected > 0");
  }
  if (link.latency_ps < 0) {
    throw Error(where + ": latency " + std::to_string(link.latency_ps) + " ps, expected >= 0");
  }
}

void check_count(int value, const std::string& where, int minimum) {
  if (value < minimum) {
    throw Error(where + " " + std::to_string(value) + ", expected >= " + std::to_string(minimum));
  }
}

std::vector<int> identity_order(int n) {
  std::vector<int> order;
  for (int i = 0; i < n; ++i) order.push_back(i);
  return order;
}

}  // namespace spmd::topology
