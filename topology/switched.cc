// Devices joined through switch nodes: a star (one switch), and the hierarchical machine of
// nodes of k devices, each node on its own fast switch (NVSwitch-like), every device also on one
// network switch (one NIC per device, like 8-GPU boxes over InfiniBand).

#include <fmt/format.h>

#include <charconv>
#include <nlohmann/json.hpp>

#include "reference/error.h"
#include "topology/topology_checks.h"
#include "topology/topology_spec.h"

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

  std::string name() const override { return fmt::format("switch({})", device_count()); }
  std::string_view kind() const override { return "switch"; }
  TopologyTraits traits() const override { return {.private_routes = true}; }

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
      : Topology(nodes * per_node, nodes * per_node + nodes + 1),
        nodes_(nodes),
        per_node_(per_node) {
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
    return fmt::format("hierarchical({} nodes x {})", nodes_, per_node_);
  }
  std::string_view kind() const override { return "hierarchical"; }
  std::vector<int> dims() const override { return {nodes_, per_node_}; }
  TopologyTraits traits() const override { return {.grid = true, .private_routes = true}; }

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

SwitchSpec SwitchSpec::from_json(const JsonValue& object, int devices) {
  object.require_object({"kind", "link"});
  return {.devices = devices, .link = required_link(object, "link")};
}

std::optional<SwitchSpec> SwitchSpec::from_text(std::string_view name, std::string_view,
                                                int devices, const CommandLineLinks& links) {
  if (name != kKind) return std::nullopt;
  return SwitchSpec{.devices = devices, .link = links.link};
}

nlohmann::json SwitchSpec::to_json() const {
  return {{"kind", kKind}, {"link", link_to_json(link)}};
}

std::unique_ptr<Topology> SwitchSpec::make() const { return make_switch(devices, link); }

HierarchicalSpec HierarchicalSpec::from_json(const JsonValue& object, int devices) {
  object.require_object({"kind", "devices_per_node", "intra_node_link", "inter_node_link"});
  const JsonValue per_node = object.required("devices_per_node", "a positive integer");
  HierarchicalSpec spec{.devices = devices, .devices_per_node = per_node.positive_int32()};
  if (devices % spec.devices_per_node != 0) {
    per_node.fail_value(fmt::format("a divisor of devices ({})", devices));
  }
  spec.intra_node_link = required_link(object, "intra_node_link");
  spec.inter_node_link = required_link(object, "inter_node_link");
  return spec;
}

std::optional<HierarchicalSpec> HierarchicalSpec::from_text(std::string_view name,
                                                            std::string_view args, int devices,
                                                            const CommandLineLinks& links) {
  if (name != kKind) return std::nullopt;
  int per_node = 0;
  const auto [end, error] = std::from_chars(args.data(), args.data() + args.size(), per_node);
  if (error != std::errc() || end != args.data() + args.size() || per_node < 1 ||
      devices % per_node != 0) {
    throw Error(
        fmt::format("--topology: '{}{}{}' for {} devices, expected hierarchical:K with K "
                    "dividing the device count",
                    name, args.empty() ? "" : ":", args, devices));
  }
  return HierarchicalSpec{.devices = devices,
                          .devices_per_node = per_node,
                          .intra_node_link = links.link,
                          .inter_node_link = links.inter_node_link};
}

nlohmann::json HierarchicalSpec::to_json() const {
  return {{"kind", kKind},
          {"devices_per_node", devices_per_node},
          {"intra_node_link", link_to_json(intra_node_link)},
          {"inter_node_link", link_to_json(inter_node_link)}};
}

HierarchicalSpec HierarchicalSpec::rescaled(int new_devices) const {
  return *from_text(kKind, fmt::format("{}", devices_per_node), new_devices,
                    {.link = intra_node_link, .inter_node_link = inter_node_link});
}

std::unique_ptr<Topology> HierarchicalSpec::make() const {
  if (devices_per_node < 1 || devices % devices_per_node != 0) {
    throw Error(fmt::format("topology.devices_per_node: {}, expected a divisor of devices ({})",
                            devices_per_node, devices));
  }
  return make_hierarchical(devices / devices_per_node, devices_per_node, intra_node_link,
                           inter_node_link);
}

}  // namespace spmd::topology
