// A ring: device i linked to i + 1 (and back, when bidirectional). Routes go forward on a
// one-way ring and the shorter way on a two-way ring (half way round: goes_forward_round).

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reference/error.h"
#include "topology/topology_checks.h"
#include "topology/topology_spec.h"

namespace spmd::topology {
namespace {

class Ring : public Topology {
 public:
  Ring(int devices, LinkSpec link, bool bidirectional)
      : Topology(devices, devices), bidirectional_(bidirectional) {
    if (devices == 1) return;
    for (int i = 0; i < devices; ++i)
      forward_.push_back(add_link(i, (i + 1) % devices, link, "ring"));
    // Two devices on a one-way ring: 0->1 and 1->0 are both forward links already.
    if (!bidirectional || devices == 2) {
      backward_ = devices == 2 ? std::vector<int>{forward_[1], forward_[0]} : std::vector<int>{};
      return;
    }
    for (int i = 0; i < devices; ++i) {
      backward_.push_back(add_link(i, (i - 1 + devices) % devices, link, "ring reverse"));
    }
  }

  std::string name() const override {
    return fmt::format("ring({}{})", device_count(), bidirectional_ ? ", bidirectional" : "");
  }
  std::string_view kind() const override { return "ring"; }

  std::vector<int> route(int from, int to) const override {
    check_device(*this, from, "from");
    check_device(*this, to, "to");
    const int n = device_count();
    const int ahead = ((to - from) % n + n) % n;
    std::vector<int> links;
    if (ahead == 0) return links;
    const bool backwards =
        bidirectional_ && !backward_.empty() && !goes_forward_round(from, ahead, n);
    if (backwards) {
      for (int i = from; i != to; i = (i - 1 + n) % n)
        links.push_back(backward_[static_cast<std::size_t>(i)]);
    } else {
      for (int i = from; i != to; i = (i + 1) % n)
        links.push_back(forward_[static_cast<std::size_t>(i)]);
    }
    return links;
  }

  std::vector<int> ring_order() const override { return identity_order(device_count()); }

 private:
  bool bidirectional_;
  std::vector<int> forward_;   // from device i to i + 1
  std::vector<int> backward_;  // from device i to i - 1
};

}  // namespace

std::unique_ptr<Topology> make_ring(int devices, LinkSpec link, bool bidirectional) {
  check_count(devices, "make_ring: devices", 1);
  check_link_spec(link, "make_ring: link");
  return std::make_unique<Ring>(devices, link, bidirectional);
}

RingSpec RingSpec::from_json(const JsonValue& object, int devices) {
  object.require_object({"kind", "bidirectional", "link"});
  RingSpec spec{.devices = devices};
  if (auto bidirectional = object.optional("bidirectional")) {
    spec.bidirectional = bidirectional->boolean();
  }
  spec.link = required_link(object, "link");
  return spec;
}

std::optional<RingSpec> RingSpec::from_text(std::string_view name, std::string_view, int devices,
                                            const CommandLineLinks& links) {
  if (name != "ring" && name != "ring-uni") return std::nullopt;
  return RingSpec{.devices = devices, .bidirectional = name == "ring", .link = links.link};
}

nlohmann::json RingSpec::to_json() const {
  return {{"kind", kKind}, {"bidirectional", bidirectional}, {"link", link_to_json(link)}};
}

RingSpec RingSpec::rescaled(int new_devices) const {
  return {.devices = new_devices, .bidirectional = bidirectional, .link = link};
}

std::unique_ptr<Topology> RingSpec::make() const { return make_ring(devices, link, bidirectional); }

}  // namespace spmd::topology
