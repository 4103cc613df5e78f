// Topologies: link counts, routes (connected walks from source to destination, shortest or in
// dimension order), ring orders whose neighbours are linked, and errors for bad arguments.

#include "topology/topology.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <rapidcheck/gtest.h>

#include "reference/error.h"
#include "tests/error_of.h"
#include "topology/topology_spec.h"

namespace spmd::topology {
namespace {

using test_errors::error_of;

const LinkSpec kLink{100'000'000'000, 1'000'000};

std::unique_ptr<Topology> random_topology() {
  const int kind = *rc::gen::inRange(0, 7);
  const int a = *rc::gen::inRange(1, 6), b = *rc::gen::inRange(1, 6), c = *rc::gen::inRange(1, 4);
  switch (kind) {
    case 0: return make_ring(a * b, kLink, false);
    case 1: return make_ring(a * b, kLink, true);
    case 2: return make_torus({a, b}, {kLink, kLink}, true);
    case 3: return make_torus({a, b, c}, {kLink}, false);
    case 4: return make_fully_connected(a * b, kLink);
    case 5: return make_switch(a * b, kLink);
    default: return make_hierarchical(a, b, kLink, kLink);
  }
}

RC_GTEST_PROP(Topology, every_route_is_a_connected_walk_from_source_to_destination, ()) {
  const auto topology = random_topology();
  const int n = topology->device_count();
  const int from = *rc::gen::inRange(0, n), to = *rc::gen::inRange(0, n);
  const std::vector<int> route = topology->route(from, to);
  int at = from;
  for (int link : route) {
    const Link& l = topology->links().at(static_cast<std::size_t>(link));
    RC_ASSERT(l.from == at);
    at = l.to;
  }
  RC_ASSERT(at == to);
  RC_ASSERT(route.empty() == (from == to));
}

RC_GTEST_PROP(Topology, ring_order_is_a_permutation, ()) {
  const auto topology = random_topology();
  std::vector<int> order = topology->ring_order();
  std::sort(order.begin(), order.end());
  for (int i = 0; i < topology->device_count(); ++i)
    RC_ASSERT(order[static_cast<std::size_t>(i)] == i);
}

int ring_gap_hops(const Topology& t) {
  const std::vector<int> order = t.ring_order();
  int worst = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    worst = std::max(worst, t.hop_count(order[i], order[(i + 1) % order.size()]));
  }
  return worst;
}

TEST(Topology, RingNeighboursAreOneHopApartWhereTheTopologyAllows) {
  EXPECT_EQ(ring_gap_hops(*make_ring(7, kLink, false)), 1);
  EXPECT_EQ(ring_gap_hops(*make_torus({3, 5}, {kLink, kLink}, true)), 2);  // both odd: a path
  EXPECT_EQ(ring_gap_hops(*make_torus({4, 4}, {kLink, kLink}, true)), 1);
  EXPECT_EQ(ring_gap_hops(*make_torus({3, 4}, {kLink, kLink}, false)), 1);  // mesh, one even side
  EXPECT_EQ(ring_gap_hops(*make_torus({2, 3, 3}, {kLink}, false)), 1);
  EXPECT_EQ(ring_gap_hops(*make_fully_connected(5, kLink)), 1);
}

TEST(Topology, LinkCountsAndRoutes) {
  EXPECT_EQ(make_ring(8, kLink, false)->links().size(), 8u);
  EXPECT_EQ(make_ring(8, kLink, true)->links().size(), 16u);
  EXPECT_EQ(make_ring(2, kLink, true)->links().size(), 2u);
  EXPECT_EQ(make_torus({4, 4}, {kLink, kLink}, true)->links().size(), 64u);
  EXPECT_EQ(make_torus({2, 4}, {kLink, kLink}, true)->links().size(), 8u + 16u);  // 2-wide: once
  EXPECT_EQ(make_torus({4, 4}, {kLink, kLink}, false)->links().size(), 48u);
  EXPECT_EQ(make_fully_connected(5, kLink)->links().size(), 20u);
  EXPECT_EQ(make_switch(5, kLink)->links().size(), 10u);
  EXPECT_EQ(make_hierarchical(2, 4, kLink, kLink)->links().size(), 32u);

  EXPECT_EQ(make_ring(8, kLink, false)->hop_count(6, 1), 3);
  EXPECT_EQ(make_ring(8, kLink, true)->hop_count(1, 6), 3);  // backwards is shorter
  EXPECT_EQ(make_ring(8, kLink, true)->hop_count(0, 4), 4);
  // Half way round: forwards from an even position, backwards from an odd one.
  const auto two_way = make_ring(8, kLink, true);
  EXPECT_EQ(two_way->links()[static_cast<std::size_t>(two_way->route(2, 6)[0])].to, 3);
  EXPECT_EQ(two_way->links()[static_cast<std::size_t>(two_way->route(3, 7)[0])].to, 2);
  const auto torus = make_torus({4, 4}, {kLink, kLink}, true);
  EXPECT_EQ(torus->hop_count(0, 15), 2);  // wraps in both dimensions
  const auto route = torus->route(0, 5);  // dimension 0 first
  EXPECT_EQ(torus->links()[static_cast<std::size_t>(route[0])].to, 4);
  // Half way round a dimension: + from an even coordinate, - from an odd one.
  EXPECT_EQ(torus->links()[static_cast<std::size_t>(torus->route(0, 8)[0])].to, 4);
  EXPECT_EQ(torus->links()[static_cast<std::size_t>(torus->route(4, 12)[0])].to, 0);
  EXPECT_EQ(torus->links()[static_cast<std::size_t>(torus->route(1, 3)[0])].to, 0);
  EXPECT_EQ(make_torus({4, 4}, {kLink, kLink}, false)->hop_count(0, 15), 6);
  EXPECT_EQ(make_switch(4, kLink)->hop_count(1, 3), 2);
  const auto boxes = make_hierarchical(2, 4, kLink, LinkSpec{50'000'000'000, 5'000'000});
  EXPECT_EQ(boxes->links()[static_cast<std::size_t>(boxes->route(0, 5)[0])].spec.latency_ps,
            5'000'000);
  EXPECT_EQ(boxes->links()[static_cast<std::size_t>(boxes->route(0, 3)[0])].spec.latency_ps,
            1'000'000);
  EXPECT_EQ(boxes->dims(), (std::vector<int>{2, 4}));
  EXPECT_EQ(boxes->name(), "hierarchical(2 nodes x 4)");
  EXPECT_EQ(torus->kind(), "torus");
}

TEST(Topology, BadArgumentsNameTheArgument) {
  EXPECT_EQ(error_of([] { make_ring(0, kLink, true); }), "make_ring: devices 0, expected >= 1");
  EXPECT_EQ(error_of([] {
              make_torus({2, 2, 2, 2}, {kLink}, true);
            }),
            "make_torus: dims has 4 entries, expected 2 or 3");
  EXPECT_EQ(error_of([] {
              make_torus({2, 0}, {kLink}, true);
            }),
            "make_torus: dims[1] 0, expected >= 1");
  EXPECT_EQ(error_of([] {
              make_switch(4, LinkSpec{0, 1});
            }),
            "make_switch: link: bandwidth 0 bytes/s, expected > 0");
  EXPECT_EQ(error_of([] { make_ring(4, kLink, true)->route(0, 4); }),
            "ring(4, bidirectional) route: to device 4, expected 0..3");
}

// ---- Specs: every kind through --topology text, JSON and rescaling

TEST(TopologySpecs, EveryTextSyntaxMakesItsKind) {
  const struct {
    const char* text;
    int devices;
    const char* name;
  } cases[] = {
      {"ring", 8, "ring(8, bidirectional)"},
      {"ring-uni", 8, "ring(8)"},
      {"torus", 8, "torus(2x4)"},
      {"torus:2x2x2", 8, "torus(2x2x2)"},
      {"mesh:4x2", 8, "mesh(4x2)"},
      {"fully_connected", 6, "fully_connected(6)"},
      {"switch", 5, "switch(5)"},
      {"hierarchical:4", 12, "hierarchical(3 nodes x 4)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const TopologySpec spec = topology_from_text(c.text, c.devices, {.link = kLink});
    EXPECT_EQ(device_count_of(spec), c.devices);
    const std::unique_ptr<Topology> topology = make_topology(spec);
    EXPECT_EQ(topology->name(), c.name);
    EXPECT_EQ(topology->kind(), kind_of(spec));
    for (const Link& link : topology->links()) EXPECT_EQ(link.spec, kLink);
    // Written to JSON and read back: the same spec.
    const nlohmann::json written = topology_to_json(spec);
    EXPECT_TRUE(topology_from_json(JsonValue(written, "topology"), c.devices) == spec)
        << written.dump();
  }
}

TEST(TopologySpecs, BadTextNamesEveryKindsSyntax) {
  EXPECT_EQ(error_of([] { topology_from_text("hypercube", 8); }),
            "--topology: 'hypercube', expected ring, ring-uni, torus[:AxB[xC]], mesh[:AxB[xC]], "
            "fully_connected, switch or hierarchical:K");
  EXPECT_EQ(error_of([] { topology_from_text("torus:4x4", 8); }),
            "--topology: 'torus:4x4' for 8 devices, expected 2 or 3 sizes whose product is the "
            "device count");
  EXPECT_EQ(error_of([] { topology_from_text("torus:4xq", 8); }),
            "--topology: 'torus:4xq', expected sizes like torus:4x2 or torus:2x2x2");
  EXPECT_EQ(error_of([] { topology_from_text("hierarchical", 8); }),
            "--topology: 'hierarchical' for 8 devices, expected hierarchical:K with K dividing "
            "the device count");
  EXPECT_EQ(error_of([] { topology_from_text("hierarchical:3", 8); }),
            "--topology: 'hierarchical:3' for 8 devices, expected hierarchical:K with K dividing "
            "the device count");
}

TEST(TopologySpecs, RescaledKeepsKindLinksAndNodeSize) {
  const LinkSpec slow{1'000'000'000, 5'000'000};
  const TopologySpec boxes = topology_from_text("hierarchical:8", 16, {kLink, slow});
  const TopologySpec scaled_spec = rescaled_topology(boxes, 64);
  const auto& scaled = std::get<HierarchicalSpec>(scaled_spec);
  EXPECT_EQ(scaled.devices, 64);
  EXPECT_EQ(scaled.devices_per_node, 8);
  EXPECT_EQ(scaled.intra_node_link, kLink);
  EXPECT_EQ(scaled.inter_node_link, slow);
  EXPECT_EQ(error_of([&] { rescaled_topology(boxes, 12); }),
            "--topology: 'hierarchical:8' for 12 devices, expected hierarchical:K with K dividing "
            "the device count");
  const TopologySpec torus_spec =
      rescaled_topology(topology_from_text("torus:4x4", 16, {.link = slow}), 32);
  const auto& torus = std::get<TorusSpec>(torus_spec);
  EXPECT_EQ(torus.dims, (std::vector<int>{4, 8}));
  EXPECT_EQ(torus.dim_links, (std::vector<LinkSpec>{slow, slow}));
}

}  // namespace
}  // namespace spmd::topology
