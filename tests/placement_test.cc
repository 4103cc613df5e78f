// Mesh placement (sim/mesh_placement.h): the defaults per topology, the text forms, the grid a
// group forms along placed dimensions, the times the placed links imply (closed forms with the
// right link), errors for placements that are not a one-to-one map, and a property: a placement
// is a bijection and results do not depend on it. `ctest -R SimPlacement` runs them.

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "backends/sim_backend.h"
#include "collectives/algorithm.h"
#include "reference/reference_backend.h"
#include "sim/machine.h"
#include "sim/mesh_placement.h"
#include "support/random_array.h"
#include "tests/error_of.h"
#include "tests/generators.h"

namespace spmd {
namespace {

using collectives::Algorithm;
using sim::MeshPlacement;
using sim::placement_from_text;
using test_errors::error_of;

std::unique_ptr<topology::Topology> topology_of(const std::string& text, int devices,
                                                topology::CommandLineLinks links = {}) {
  return topology::make_topology(topology::topology_from_text(text, devices, links));
}

std::string placed_text(const std::string& spec, const Mesh& mesh, const std::string& topology,
                        int machine_devices = 0) {
  const int devices = machine_devices > 0 ? machine_devices : mesh.device_count();
  return MeshPlacement(placement_from_text(spec), mesh, *topology_of(topology, devices)).text();
}

// ---- Text

TEST(SimPlacementText, ReadsBackWhatItWrites) {
  for (const char* text : {"auto", "row-major", "devices:3,2,1,0", "data=y,model=x", "a=x:4,b=x+y",
                           "model=intra,data=inter", "i=0+1:2,j=1"}) {
    EXPECT_EQ(sim::placement_text(placement_from_text(text)), text);
  }
  const sim::PlacementSpec spec = placement_from_text("a=x:4,b=x+y");
  ASSERT_EQ(spec.axes.size(), 2u);
  EXPECT_EQ(spec.axes[1].axis, "b");
  EXPECT_EQ(spec.axes[1].parts, (std::vector<sim::DimPart>{{"x", 0}, {"y", 0}}));
}

TEST(SimPlacementText, BadTextIsOneLineNamingTheFlag) {
  const std::string forms = std::string(sim::placement_syntax());
  EXPECT_EQ(error_of([] { placement_from_text("devices:1,x"); }),
            "--placement devices:1,x: device 'x' is not a device number, expected " + forms);
  EXPECT_EQ(error_of([] { placement_from_text("data"); }),
            "--placement data: 'data' is not AXIS=DIMENSIONS, expected " + forms);
  EXPECT_EQ(error_of([] { placement_from_text("data=x:0"); }),
            "--placement data=x:0: 'x:0' has no positive size after ':', expected " + forms);
  EXPECT_EQ(error_of([] { placement_from_text("a=x,a=y"); }),
            "--placement a=x,a=y: axis a is placed twice, expected " + forms);
  EXPECT_EQ(error_of([] { placement_from_text(""); }), "--placement : empty, expected " + forms);
}

// ---- Defaults

TEST(SimPlacement, DefaultOnATorusIsCreateDeviceMeshsAssignment) {
  // The last axis first, the largest set of free dimensions whose sizes multiply to its size.
  EXPECT_EQ(placed_text("auto", Mesh({4, 4}, {"data", "model"}), "torus:4x4"), "data=y,model=x");
  EXPECT_EQ(placed_text("auto", Mesh({16}, {"i"}), "torus:4x4"), "i=x+y");
  EXPECT_EQ(placed_text("auto", Mesh({4, 16}, {"a", "b"}), "torus:4x4x4"), "a=z,b=x+y");
  EXPECT_EQ(placed_text("auto", Mesh({2, 8}, {"data", "model"}), "torus:2x8"), "data=x,model=y");
  // No set of whole dimensions fits: pieces, strided ones major inside an axis.
  EXPECT_EQ(placed_text("auto", Mesh({2, 8}, {"data", "model"}), "torus:4x4"),
            "data=y:2,model=x+y:2");
  EXPECT_EQ(placed_text("auto", Mesh({32, 8}, {"data", "model"}), "torus:16x16"),
            "data=x:2+y,model=x:8");
  // A mesh smaller than the machine: row-major, on the first devices.
  EXPECT_EQ(placed_text("auto", Mesh({4}, {"i"}), "torus:4x4", 16), "i=y");
  // Row-major when asked, as pieces of dimensions where they divide.
  EXPECT_EQ(placed_text("row-major", Mesh({2, 8}, {"data", "model"}), "torus:4x4"),
            "data=x:2,model=x:2+y");
  // On a 4x4 torus, data=y puts mesh device (d, m) on machine device (x=m, y=d).
  const MeshPlacement placement(placement_from_text("auto"), Mesh({4, 4}, {"data", "model"}),
                                *topology_of("torus:4x4", 16));
  EXPECT_EQ(placement.device(1 * 4 + 2), 2 * 4 + 1);
  EXPECT_EQ(placement.mesh_device(2 * 4 + 1), 1 * 4 + 2);
}

TEST(SimPlacement, DefaultOnAHierarchicalMachineIsNodeMajor) {
  EXPECT_EQ(placed_text("auto", Mesh({4, 8}, {"data", "model"}), "hierarchical:8"),
            "data=inter,model=intra");
  const MeshPlacement placement(placement_from_text("auto"), Mesh({8, 4}, {"data", "model"}),
                                *topology_of("hierarchical:8", 32));
  EXPECT_EQ(placement.text(), "data=inter+intra:2,model=intra:4");
  for (int d = 0; d < 32; ++d) EXPECT_EQ(placement.device(d), d);
}

TEST(SimPlacement, DefaultElsewhereIsRowMajor) {
  const MeshPlacement placement(placement_from_text("auto"), Mesh({2, 4}, {"a", "b"}),
                                *topology_of("ring", 8));
  EXPECT_EQ(placement.text(), "row-major");
  for (int d = 0; d < 8; ++d) EXPECT_EQ(placement.device(d), d);
  // A smaller mesh takes the first machine devices.
  const MeshPlacement smaller(placement_from_text("auto"), Mesh({4}, {"i"}),
                              *topology_of("torus:4x4", 16));
  for (int d = 0; d < 4; ++d) EXPECT_EQ(smaller.device(d), d);
  EXPECT_EQ(smaller.mesh_device(4), -1);
}

// ---- Groups

TEST(SimPlacement, AGroupOverAPlacedAxisFormsTheGridOfItsDimensions) {
  const Mesh mesh({4, 4}, {"data", "model"});
  const auto torus = topology_of("torus:4x4", 16);
  const MeshPlacement placement(placement_from_text("data=x,model=y"), mesh, *torus);
  // The data group of model 1: mesh devices 1, 5, 9, 13 on machine column y=1.
  const sim::PlacedGroup group = placement.group({1, 5, 9, 13});
  EXPECT_EQ(group.devices, (std::vector<int>{1, 5, 9, 13}));
  EXPECT_EQ(group.grid_dims, (std::vector<int>{4}));
  // Both axes, model named first: model is the major grid dimension.
  std::vector<int> model_major;
  for (int m = 0; m < 4; ++m) {
    for (int d = 0; d < 4; ++d) model_major.push_back(d * 4 + m);
  }
  EXPECT_EQ(placement.group(model_major).grid_dims, (std::vector<int>{4, 4}));
  // Ranks not row-major over the parts: no grid.
  EXPECT_TRUE(placement.group({5, 1, 9, 13}).grid_dims.empty());
  // A device list has no dimensions; only the whole machine in device order is a grid.
  const MeshPlacement listed(placement_from_text("devices:15,14,13,12,11,10,9,8,7,6,5,4,3,2,1,0"),
                             mesh, *torus);
  EXPECT_TRUE(listed.group({1, 5, 9, 13}).grid_dims.empty());
}

// ---- Times: the placed dimension's links

constexpr topology::LinkSpec kSlow{.bandwidth_bytes_per_s = 10'000'000'000,
                                   .latency_ps = 1'000'000};
constexpr topology::LinkSpec kFast{.bandwidth_bytes_per_s = 40'000'000'000,
                                   .latency_ps = 3'000'000};

struct Timed {
  std::vector<Values> outputs;
  sim::CollectiveRecord record;
};

// psum over `axis` of seeded float32 data on every device of `mesh`.
Timed psum_over(const sim::MachineSpec& spec, sim::SimOptions options, const Mesh& mesh,
                const std::string& axis, std::int64_t elements) {
  sim::Machine machine(spec, std::move(options));
  std::vector<Values> inputs;
  for (Array& x :
       random_per_device(DType::float32, {elements}, mesh.device_count(), 7, {.max_exponent = 0})) {
    inputs.push_back({std::move(x)});
  }
  const AxisNames axes(axis);
  Timed timed;
  timed.outputs = machine.run(
      mesh, inputs, [&](Context& ctx, const Values& xs) { return Values{ctx.psum(xs[0], axes)}; },
      false);
  timed.record = machine.cost_log().collectives.at(0);
  return timed;
}

std::int64_t closed_form_ps(Algorithm algorithm, int ranks, std::int64_t elements,
                            std::vector<int> torus_dims, topology::LinkSpec route) {
  collectives::CollectiveShape shape;
  shape.ranks = ranks;
  shape.elements = elements;
  shape.element_bytes = 4;
  shape.torus_dims = std::move(torus_dims);
  return collectives::closed_form_time_ps(algorithm, shape, route.latency_ps,
                                          route.bandwidth_bytes_per_s);
}

void expect_same_bits(const std::vector<Values>& a, const std::vector<Values>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t d = 0; d < a.size(); ++d) EXPECT_TRUE(a[d][0].bitwise_equal(b[d][0])) << d;
}

TEST(SimPlacement, APsumOverAnAxisRunsOnItsTorusDimensionsLinks) {
  sim::MachineSpec spec;
  spec.devices = 16;
  spec.topology = topology::TorusSpec{{.devices = 16, .dims = {4, 4}, .dim_links = {kSlow, kFast}}};
  const Mesh mesh({4, 4}, {"data", "model"});
  const std::int64_t elements = 1 << 16;
  for (Algorithm algorithm : {Algorithm::ring, Algorithm::torus}) {
    SCOPED_TRACE(std::string(collectives::algorithm_name(algorithm)));
    sim::SimOptions options{.algorithm = algorithm, .ring_by_rank = true};
    options.placement = placement_from_text("data=x,model=y");
    const Timed on_x = psum_over(spec, options, mesh, "data", elements);
    options.placement = placement_from_text("data=y,model=x");
    const Timed on_y = psum_over(spec, options, mesh, "data", elements);
    EXPECT_EQ(on_x.record.algorithm, collectives::algorithm_name(algorithm));
    EXPECT_EQ(on_x.record.algorithm_note, "");
    EXPECT_EQ(on_x.record.end_ps - on_x.record.start_ps,
              closed_form_ps(algorithm, 4, elements, {4}, kSlow));
    EXPECT_EQ(on_y.record.end_ps - on_y.record.start_ps,
              closed_form_ps(algorithm, 4, elements, {4}, kFast));
    expect_same_bits(on_x.outputs, on_y.outputs);
  }
}

TEST(SimPlacement, APsumInsideANodeTakesTheIntraNodeTimeAndAcrossNodesTheInterNodeOne) {
  sim::MachineSpec spec;
  spec.devices = 16;
  spec.topology = topology::HierarchicalSpec{
      .devices = 16, .devices_per_node = 4, .intra_node_link = kFast, .inter_node_link = kSlow};
  const Mesh mesh({4, 4}, {"data", "model"});
  const std::int64_t elements = 1 << 16;
  // A route through a switch is an up-link and a down-link: latencies add.
  const auto through_switch = [](topology::LinkSpec link) {
    return topology::LinkSpec{link.bandwidth_bytes_per_s, 2 * link.latency_ps};
  };
  sim::SimOptions options{.algorithm = Algorithm::ring, .ring_by_rank = true};
  const Timed inside = psum_over(spec, options, mesh, "model", elements);  // default: node-major
  options.placement = placement_from_text("data=intra,model=inter");
  const Timed across = psum_over(spec, options, mesh, "model", elements);
  EXPECT_EQ(inside.record.end_ps - inside.record.start_ps,
            closed_form_ps(Algorithm::ring, 4, elements, {}, through_switch(kFast)));
  EXPECT_EQ(across.record.end_ps - across.record.start_ps,
            closed_form_ps(Algorithm::ring, 4, elements, {}, through_switch(kSlow)));
  expect_same_bits(inside.outputs, across.outputs);
}

TEST(SimPlacement, TheTorusAlgorithmRunsOverAPlacedAxisInsteadOfFallingBack) {
  // A 16x16 torus with a (data, model) mesh: each axis is one dimension, so a psum over data
  // can run the torus algorithm along it (before placement it fell back to ring).
  sim::MachineSpec spec;
  spec.devices = 256;
  spec.topology =
      topology::TorusSpec{{.devices = 256, .dims = {16, 16}, .dim_links = {kSlow, kSlow}}};
  sim::Machine machine(spec, {.cost_only = true, .algorithm = Algorithm::torus});
  CollectiveCall call;
  call.op = CollectiveOp::psum;
  call.axes = AxisNames("data");
  machine.run(
      Mesh({16, 16}, {"data", "model"}), std::vector<Values>(256),
      [&](Context& ctx, const Values&) {
        ctx.collective_cost(call, DType::float32, {1 << 20});
        return Values{};
      },
      false);
  const sim::CollectiveRecord& record = machine.cost_log().collectives.at(0);
  EXPECT_EQ(record.algorithm, "torus");
  EXPECT_EQ(record.algorithm_note, "");
  EXPECT_EQ(record.end_ps - record.start_ps,
            closed_form_ps(Algorithm::torus, 16, 1 << 20, {16}, kSlow));
  EXPECT_EQ(machine.cost_log().placement, "data=y,model=x");
}

TEST(SimPlacement, MemoryAndTransfersAreReportedByMeshDevice) {
  sim::MachineSpec spec;
  spec.devices = 4;
  spec.topology = topology::RingSpec{.devices = 4};
  sim::SimOptions options{.record_link_transfers = 100};
  options.placement = placement_from_text("devices:2,0,3,1");
  sim::Machine machine(spec, options);
  const std::vector<Values> inputs(4, Values{Array(DType::float32, {4})});
  machine.run(
      Mesh({4}, {"i"}), inputs,
      [](Context& ctx, const Values& xs) {
        ctx.hold_memory(1000 * (ctx.device() + 1), "activations");
        return Values{ctx.ppermute(xs[0], AxisNames("i"), {{0, 1}})};
      },
      false);
  const sim::CostLog& log = machine.cost_log();
  for (int d = 1; d < 4; ++d) {
    EXPECT_EQ(log.memory[static_cast<std::size_t>(d)].peak_bytes - log.memory[0].peak_bytes,
              1000 * d);
  }
  ASSERT_EQ(log.transfers.size(), 1u);
  EXPECT_EQ(log.transfers[0].from_device, 0);
  EXPECT_EQ(log.transfers[0].to_device, 1);
}

// ---- Errors

std::string placement_error(const std::string& spec, const Mesh& mesh, const std::string& topology,
                            int devices) {
  const auto machine = topology_of(topology, devices);
  return error_of([&] { MeshPlacement(placement_from_text(spec), mesh, *machine); });
}

TEST(SimPlacementErrors, AreOneLineNamingThePlacementTheValueAndTheExpectation) {
  const Mesh mesh({4, 4}, {"data", "model"});
  EXPECT_EQ(placement_error("data=x,modle=y", mesh, "torus:4x4", 16),
            "placement data=x,modle=y: mesh Mesh('data': 4, 'model': 4) has no axis modle, "
            "expected data or model");
  EXPECT_EQ(placement_error("data=x,model=z", mesh, "torus:4x4", 16),
            "placement data=x,model=z: the machine torus(4x4) has no dimension z, expected x or "
            "y (or 0 to 1)");
  EXPECT_EQ(placement_error("data=x", mesh, "torus:4x4", 16),
            "placement data=x: mesh axis model (size 4) is not placed, expected every axis of "
            "Mesh('data': 4, 'model': 4) larger than 1 to be placed");
  EXPECT_EQ(placement_error("data=x+y,model=y", mesh, "torus:4x4", 16),
            "placement data=x+y,model=y: dimension y (size 4) has 2 parts without a size, "
            "expected at most one");
  EXPECT_EQ(placement_error("data=x:2,model=y", mesh, "torus:4x4", 16),
            "placement data=x:2,model=y: mesh axis data (size 4) is placed on 2 coordinates, "
            "expected parts whose sizes multiply to 4");
  EXPECT_EQ(placement_error("data=x:4+y:2,model=y:4", mesh, "torus:4x4", 16),
            "placement data=x:4+y:2,model=y:4: dimension y (size 4) is given parts of 8 "
            "coordinates, expected at most 4");
  EXPECT_EQ(
      placement_error("data=x:3+y,model=x", Mesh({12, 1}, {"data", "model"}), "torus:4x4", 16),
      "placement data=x:3+y,model=x: dimension x (size 4) does not split into parts of 3, "
      "expected sizes that divide it");
  EXPECT_EQ(placement_error("data=x,model=y", mesh, "ring", 16),
            "placement data=x,model=y: the machine ring(16, bidirectional) has no dimensions to "
            "place mesh axes along, expected a torus, mesh or hierarchical machine (or "
            "devices:...)");
  EXPECT_EQ(placement_error("devices:0,1,2", mesh, "ring", 16),
            "placement devices:0,1,2: 3 devices for mesh Mesh('data': 4, 'model': 4), expected one "
            "per mesh device (16)");
  EXPECT_EQ(placement_error("devices:0,1,2,2", Mesh({4}, {"i"}), "ring", 8),
            "placement devices:0,1,2,2: device 2 is listed twice, expected each machine device at "
            "most once");
  EXPECT_EQ(placement_error("devices:0,1,2,8", Mesh({4}, {"i"}), "ring", 8),
            "placement devices:0,1,2,8: device 8 is not on the machine, expected 0 to 7");
}

TEST(SimPlacementErrors, ABadPlacementStopsMachineRunBeforeAnyDeviceRuns) {
  sim::MachineSpec spec;
  spec.devices = 4;
  spec.topology = topology::RingSpec{.devices = 4};
  sim::SimOptions options;
  options.placement = placement_from_text("devices:0,0,1,2");
  sim::Machine machine(spec, options);
  bool ran = false;
  EXPECT_EQ(error_of([&] {
              machine.run(
                  Mesh({4}, {"i"}), std::vector<Values>(4),
                  [&](Context&, const Values&) {
                    ran = true;
                    return Values{};
                  },
                  false);
            }),
            "placement devices:0,0,1,2: device 0 is listed twice, expected each machine device "
            "at most once");
  EXPECT_FALSE(ran);
}

// ---- Property

// A random placement of `mesh` on `topology` (same device count): auto, row-major, a shuffled
// device list, or (on machines with dimensions) each mesh axis's prime factors matched to
// random prime pieces of the machine's dimensions, listed in a random order.
rc::Gen<std::string> random_placement(const Mesh& mesh, const topology::Topology& topology) {
  return rc::gen::exec([&mesh, &topology] {
    const int kind =
        topology.dims().empty() ? *rc::gen::element(0, 1, 2) : *rc::gen::element(0, 1, 2, 3, 3, 3);
    if (kind == 0) return std::string("auto");
    if (kind == 1) return std::string("row-major");
    if (kind == 2) {
      const std::vector<int> order = *testkit::permutation(topology.device_count());
      std::string text = "devices:";
      for (std::size_t i = 0; i < order.size(); ++i) {
        text += (i ? "," : "") + std::to_string(order[i]);
      }
      return text;
    }
    const auto primes = [](int n) {
      std::vector<int> factors;
      for (int p = 2; n > 1; ++p) {
        while (n % p == 0) factors.push_back(p), n /= p;
      }
      return factors;
    };
    std::vector<std::pair<int, int>> pieces;  // (dimension, prime), unused
    const std::vector<int> dims = topology.dims();
    for (std::size_t k = 0; k < dims.size(); ++k) {
      for (int p : primes(dims[k])) pieces.emplace_back(static_cast<int>(k), p);
    }
    std::vector<std::string> axes;
    for (int a = 0; a < mesh.axis_count(); ++a) {
      std::vector<std::string> parts;
      for (int p : primes(mesh.shape()[static_cast<std::size_t>(a)])) {
        std::vector<std::size_t> fits;
        for (std::size_t i = 0; i < pieces.size(); ++i) {
          if (pieces[i].second == p) fits.push_back(i);
        }
        const std::size_t i = *rc::gen::elementOf(fits);
        parts.push_back(std::to_string(pieces[i].first) + ":" + std::to_string(p));
        pieces.erase(pieces.begin() + static_cast<std::ptrdiff_t>(i));
      }
      if (parts.empty()) continue;
      std::string axis = mesh.axis_names()[static_cast<std::size_t>(a)] + "=";
      for (std::size_t i = 0; i < parts.size(); ++i) axis += (i ? "+" : "") + parts[i];
      axes.push_back(axis);
    }
    std::string text;
    for (std::size_t i : *testkit::permutation(static_cast<int>(axes.size()))) {
      text += (text.empty() ? "" : ",") + axes[static_cast<std::size_t>(i)];
    }
    return text.empty() ? std::string("auto") : text;
  });
}

RC_GTEST_PROP(SimPlacementProperty, is_a_bijection_and_results_do_not_depend_on_it, ()) {
  const Mesh mesh = *testkit::mesh(1, 3, *rc::gen::element(8, 12, 16));
  const int devices = mesh.device_count();
  RC_PRE(devices > 1);
  std::vector<std::string> kinds = {"ring", "switch", "torus", "mesh"};
  for (int k = 2; k < devices; ++k) {
    if (devices % k == 0) kinds.push_back("hierarchical:" + std::to_string(k));
  }
  const std::string topology_text = *rc::gen::elementOf(kinds);
  sim::MachineSpec spec;
  spec.devices = devices;
  spec.topology = topology::topology_from_text(topology_text, devices, {});
  const auto topology = topology::make_topology(spec.topology);
  const std::string placement_text = *random_placement(mesh, *topology);
  const bool listed = placement_text.starts_with("devices:");
  RC_TAG(listed || placement_text.find('=') == std::string::npos ? placement_text.substr(0, 8)
                                                                 : "axes");

  const MeshPlacement placement(placement_from_text(placement_text), mesh, *topology);
  std::set<int> machine_devices(placement.devices().begin(), placement.devices().end());
  RC_ASSERT(machine_devices.size() == static_cast<std::size_t>(devices));
  for (int m = 0; m < devices; ++m) {
    RC_ASSERT(placement.device(m) >= 0 && placement.device(m) < devices);
    RC_ASSERT(placement.mesh_device(placement.device(m)) == m);
  }

  // Rings in rank order and an algorithm whose order does not follow the grid: the reference's
  // bits on every placement.
  const Algorithm algorithm =
      *rc::gen::element(Algorithm::direct, Algorithm::ring, Algorithm::double_binary_tree);
  const std::vector<std::string> names = *testkit::axis_subset(mesh);
  const int n = testkit::group_size(mesh, names);
  sim::SimOptions options{.algorithm = algorithm, .ring_by_rank = true};
  options.placement = placement_from_text(placement_text);
  sim::Machine machine(spec, options);
  ReferenceBackend reference(order_for_algorithm(algorithm), devices);
  const std::vector<Array> inputs = random_per_device(
      DType::float32, {n * *rc::gen::inRange(1, 4), 3}, devices, *testkit::seed());
  std::vector<Values> args;
  for (const Array& x : inputs) args.push_back({x});
  const AxisNames axes(names);
  const auto body = [&](Context& ctx, const Values& xs) {
    return Values{ctx.psum(xs[0], axes), ctx.all_gather(xs[0], axes, 0, true),
                  ctx.psum_scatter(xs[0], axes, 0, true)};
  };
  const std::vector<Values> expected = test_gen::run_per_device(reference, mesh, args, 3, body);
  const std::vector<Values> actual = test_gen::run_per_device(machine, mesh, args, 3, body);
  for (int d = 0; d < devices; ++d) {
    for (std::size_t j = 0; j < 3; ++j) {
      RC_ASSERT(actual[static_cast<std::size_t>(d)][j].bitwise_equal(
          expected[static_cast<std::size_t>(d)][j]));
    }
  }
}

}  // namespace
}  // namespace spmd
