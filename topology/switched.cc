// Devices joined through switch nodes: a star (one switch), and the hierarchical machine of
// nodes of k devices, each node on its own fast switch (NVSwitch-like), every device also on one
// network switch (one NIC per device, like 8-GPU boxes over InfiniBand).

#include "reference/error.h"
#include "topology/topology_checks.h"

namespace spmd::topology {
namespace {

class Star : public Topology {
 public:
  Star(int devices, LinkSpec link) : Topology(devices, devices + 1) {
    for (int d = 0; d < devices; ++d) {
      up_.push_back(add_link(d, devices, link, "to switch"));
      down_.push_back(add_link(devices, d, link, "from switch"));
    }
  }

  std::string name() const override { return "switch(" + std::to_string(device_count()) + ")"; }
  std::string_view kind() const override { return "switch"; }

  std::vector<int> route(int from, int to) const override {
    check_device(*this, from, "from");
    check_device(*this, to, "to");
    if (from == to) return {};
    return {up_[static_cast<std::size_t>(from)], down_[static_cast<std::size_t>(to)]};
  }

  std::vector<int> ring_order() const override { return identity_order(device_count()); }

 private:
  std::vector<int> up_, down_;
};

class Hierarchical : public Topology {
 public:
  Hierarchical(int nodes, int per_node, LinkSpec intra, LinkSpec inter)
      : Topology(nodes * per_node, nodes * per_node + nodes + 1), nodes_(nodes), per_node_(per_node) {
    const int devices = nodes * per_node;
    const int network = devices + nodes;
    for (int d = 0; d < devices; ++d) {
      const int node_switch = devices + d / per_node;
      intra_up_.push_back(add_link(d, node_switch, intra, "intra-node"));
      intra_down_.push_back(add_link(node_switch, d, intra, "intra-node"));
      inter_up_.push_back(add_link(d, network, inter, "network"));
      inter_down_.push_back(add_link(network, d, inter, "network"));
    }
  }

  std::string name() const override {
    return "hierarchical(" + std::to_string(nodes_) + " nodes x " + std::to_string(per_node_) +
           ")";
  }
  std::string_view kind() const override { return "hierarchical"; }
  std::vector<int> dims() const override { return {nodes_, per_node_}; }

  std::vector<int> route(int from, int to) const override {
    check_device(*this, from, "from");
    check_device(*this, to, "to");
    if (from == to) return {};
    const auto f = static_cast<std::size_t>(from), t = static_cast<std::size_t>(to);
    if (from / per_node_ == to / per_node_) return {intra_up_[f], intra_down_[t]};
    return {inter_up_[f], inter_down_[t]};
  }

  std::vector<int> ring_order() const override { return identity_order(device_count()); }

 private:
  int nodes_, per_node_;
  std::vector<int> intra_up_, intra_down_, inter_up_, inter_down_;
};

}  // namespace

std::unique_ptr<Topology> make_switch(int devices, LinkSpec link) {
  check_count(devices, "make_switch: devices", 1);
  check_link_spec(link, "make_switch: link");
  return std::make_unique<Star>(devices, link);
}

std::unique_ptr<Topology> make_hierarchical(int nodes, int devices_per_node, LinkSpec intra,
                                            LinkSpec inter) {
  check_count(nodes, "make_hierarchical: nodes", 1);
  check_count(devices_per_node, "make_hierarchical: devices_per_node", 1);
  check_link_spec(intra, "make_hierarchical: intra-node link");
  check_link_spec(inter, "make_hierarchical: inter-node link");
  return std::make_unique<Hierarchical>(nodes, devices_per_node, intra, inter);
}

}  // namespace spmd::topology
