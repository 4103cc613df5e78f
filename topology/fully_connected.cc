// Every ordered pair of devices has a link of its own.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "topology/topology_checks.h"
#include "topology/topology_spec.h"

namespace spmd::topology {
namespace {

class FullyConnected : public Topology {
 public:
  FullyConnected(int devices, LinkSpec link) : Topology(devices, devices) {
    for (int from = 0; from < devices; ++from) {
      for (int to = 0; to < devices; ++to) {
        if (from != to) add_link(from, to, link, "direct");
      }
    }
  }

  std::string name() const override { return fmt::format("fully_connected({})", device_count()); }
  std::string_view kind() const override { return "fully_connected"; }
  TopologyTraits traits() const override { return {.private_routes = true}; }

  std::vector<int> route(int from, int to) const override {
    check_device(*this, from, "from");
    check_device(*this, to, "to");
    if (from == to) return {};
    // Links are added row by row, skipping the diagonal.
    return {from * (device_count() - 1) + (to < from ? to : to - 1)};
  }

  std::vector<int> ring_order() const override { return identity_order(device_count()); }
};

}  // namespace

std::unique_ptr<Topology> make_fully_connected(int devices, LinkSpec link) {
  check_count(devices, "make_fully_connected: devices", 1);
  check_link_spec(link, "make_fully_connected: link");
  return std::make_unique<FullyConnected>(devices, link);
}

FullyConnectedSpec FullyConnectedSpec::from_json(const JsonValue& object, int devices) {
  object.require_object({"kind", "link"});
  return {.devices = devices, .link = required_link(object, "link")};
}

std::optional<FullyConnectedSpec> FullyConnectedSpec::from_text(std::string_view name,
                                                                std::string_view, int devices,
                                                                const CommandLineLinks& links) {
  if (name != kKind) return std::nullopt;
  return FullyConnectedSpec{.devices = devices, .link = links.link};
}

nlohmann::json FullyConnectedSpec::to_json() const {
  return {{"kind", kKind}, {"link", link_to_json(link)}};
}

std::unique_ptr<Topology> FullyConnectedSpec::make() const {
  return make_fully_connected(devices, link);
}

}  // namespace spmd::topology
