#include "topology/topology.h"

#include <fmt/format.h>

#include "reference/error.h"

namespace spmd::topology {

int Topology::add_link(int from, int to, LinkSpec spec, std::string label) {
  links_.push_back(Link{from, to, spec, std::move(label)});
  return static_cast<int>(links_.size()) - 1;
}

void check_device(const Topology& topology, int device, const char* role) {
  if (device < 0 || device >= topology.device_count()) {
    throw Error(fmt::format("{} route: {} device {}, expected 0..{}", topology.name(), role, device,
                            topology.device_count() - 1));
  }
}

void check_link_spec(const LinkSpec& link, const std::string& where) {
  if (link.bandwidth_bytes_per_s <= 0) {
    throw Error(
        fmt::format("{}: bandwidth {} bytes/s, expected > 0", where, link.bandwidth_bytes_per_s));
  }
  if (link.latency_ps < 0) {
    throw Error(fmt::format("{}: latency {} ps, expected >= 0", where, link.latency_ps));
  }
}

void check_count(int value, const std::string& where, int minimum) {
  if (value < minimum) {
    throw Error(fmt::format("{} {}, expected >= {}", where, value, minimum));
  }
}

std::vector<int> identity_order(int n) {
  std::vector<int> order;
  for (int i = 0; i < n; ++i) order.push_back(i);
  return order;
}

}  // namespace spmd::topology
