// The exact fast path (sim/fast_path.h): a collective with its links to itself is timed by the
// closed form, and that must be exactly what carrying its messages gives: the same bits, the
// same cost log, on any program, contended or not.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <set>

#include "collectives/algorithm.h"
#include "tests/collective_ops.h"
#include "tests/generators.h"
#include "sim/machine.h"
#include "topology/topology_spec.h"

namespace spmd {
namespace {

using collectives::Algorithm;
using collectives::CollectiveKind;
using collectives::CollectiveShape;

// ---- The phases: every message of the schedule goes between a pair of its phase.

rc::Gen<CollectiveShape> phased_shape(Algorithm algorithm) {
  return rc::gen::exec([algorithm] {
    CollectiveShape shape;
    shape.kind = algorithm == Algorithm::ring
                     ? *rc::gen::element(CollectiveKind::all_reduce, CollectiveKind::reduce_scatter,
                                         CollectiveKind::all_gather, CollectiveKind::broadcast)
                     : CollectiveKind::all_reduce;
    if (algorithm == Algorithm::torus || algorithm == Algorithm::bidirectional_torus) {
      shape.torus_dims = *rc::gen::container<std::vector<int>>(
          *rc::gen::inRange<std::size_t>(1, 4), rc::gen::inRange(1, 5));
      shape.ranks = 1;
      for (int d : shape.torus_dims) shape.ranks *= d;
    } else {
      shape.ranks = *rc::gen::inRange(1, 12);
      shape.ring = *testkit::permutation(shape.ranks);
    }
    shape.elements = shape.ranks * *rc::gen::inRange<std::int64_t>(0, 40);
    shape.element_bytes = 4;
    shape.pipeline_chunk_bytes = *rc::gen::element<std::int64_t>(16, 64, 2 << 20);
    shape.root = *rc::gen::inRange(0, shape.ranks);
    return shape;
  });
}

RC_GTEST_PROP(FastPath, every_message_goes_between_a_pair_of_the_algorithms_phases, ()) {
  const Algorithm algorithm =
      *rc::gen::element(Algorithm::ring, Algorithm::bidirectional_ring, Algorithm::torus,
                        Algorithm::bidirectional_torus);
  const CollectiveShape shape = *phased_shape(algorithm);
  RC_PRE(collectives::supports(algorithm, shape));
  std::set<collectives::RankPair> pairs;
  for (const auto& phase : collectives::link_phases(algorithm, shape)) {
    pairs.insert(phase.begin(), phase.end());
  }
  for (const collectives::Step& step : collectives::build_schedule(algorithm, shape).steps) {
    for (const collectives::Transfer& t : step.transfers) {
      if (t.source != t.destination) RC_ASSERT(pairs.contains({t.source, t.destination}));
    }
  }
}

RC_GTEST_PROP(FastPath, phases_of_one_cost_give_the_uniform_closed_form, ()) {
  const Algorithm algorithm =
      *rc::gen::element(Algorithm::ring, Algorithm::bidirectional_ring, Algorithm::torus,
                        Algorithm::bidirectional_torus);
  const CollectiveShape shape = *phased_shape(algorithm);
  RC_PRE(collectives::supports(algorithm, shape));
  const cost_model::RouteCost cost{*rc::gen::inRange<std::int64_t>(0, 3'000'000),
                                   *rc::gen::element<std::int64_t>(7, 1'000'000'000)};
  const std::vector<cost_model::RouteCost> per_phase(
      collectives::link_phases(algorithm, shape).size(), cost);
  RC_PRE(!per_phase.empty());
  RC_ASSERT(collectives::phased_closed_form_time_ps(algorithm, shape, per_phase) ==
            collectives::closed_form_time_ps(algorithm, shape, cost.latency_ps,
                                             cost.bandwidth_bytes_per_s));
}

// ---- Both paths on whole programs.

using test_ops::apply;
using test_ops::Op;
using test_ops::start;

// Machines whose links differ by kind (inside and between nodes, torus dimensions), so a fast
// path that took the wrong link's cost would show.
sim::MachineSpec machine_for(const std::string& topology, int devices) {
  sim::MachineSpec spec;
  spec.devices = devices;
  spec.topology = topology::topology_from_text(
      topology, devices,
      {.link = {.bandwidth_bytes_per_s = 3'000'000'000, .latency_ps = 700'000},
       .inter_node_link = topology::LinkSpec{.bandwidth_bytes_per_s = 1'000'000'000,
                                        .latency_ps = 2'300'000}});
  return spec;
}

rc::Gen<std::string> topology_text(int devices) {
  return rc::gen::exec([=] {
    std::vector<std::string> kinds = {"ring", "ring-uni", "torus", "mesh", "fully_connected",
                                      "switch"};
    for (int k = 2; k < devices; ++k) {
      if (devices % k == 0) kinds.push_back("hierarchical:" + std::to_string(k));
    }
    return *rc::gen::elementOf(kinds);
  });
}

struct Step {
  Op op;
  std::vector<std::string> axes;
  double flops_per_device;  // compute before the collective, different per device
  // Started and waited at the end of the program, on this stream; otherwise blocking.
  bool started = false;
  int stream = -1;
};

struct Program {
  Mesh mesh;
  std::vector<Step> steps;
};

rc::Gen<Program> program() {
  return rc::gen::exec([] {
    Program p{*testkit::mesh(1, 2, 16), {}};
    const int count = *rc::gen::inRange(1, 5);
    for (int i = 0; i < count; ++i) {
      const Op op = *rc::gen::element(Op::psum, Op::pmax, Op::psum_scatter, Op::all_gather,
                                      Op::all_to_all, Op::ppermute);
      std::vector<std::string> axes = *testkit::axis_subset(p.mesh);
      // JAX 0.12 refuses a ppermute over axes out of the mesh's order.
      if (op == Op::ppermute) axes = testkit::in_mesh_order(p.mesh, axes);
      p.steps.push_back({op, axes, *rc::gen::element(0.0, 1e6, 3e7), *rc::gen::arbitrary<bool>(),
                         *rc::gen::element(-1, 0, 1)});
    }
    return p;
  });
}

struct Outcome {
  std::vector<Values> outputs;
  sim::CostLog log;
};

Outcome run(const Program& p, const std::string& topology, std::optional<Algorithm> algorithm,
            bool cost_only, bool fast_path, std::uint64_t seed,
            sim::LinkSharing sharing = sim::LinkSharing::fair) {
  const int devices = p.mesh.device_count();
  sim::Machine machine(machine_for(topology, devices), {.cost_only = cost_only,
                                                        .algorithm = algorithm,
                                                        .fast_path = fast_path,
                                                        .link_sharing = sharing});
  std::vector<Values> args;
  // Rows a multiple of every group size, so that every op splits evenly.
  for (const Array& x : random_per_device(DType::float32, {devices * 3, 2}, devices,
                                                    seed)) {
    args.push_back({x});
  }
  Outcome outcome;
  const int outputs = static_cast<int>(p.steps.size()) + 1;
  outcome.outputs = test_gen::run_per_device(
      machine, p.mesh, args, outputs,
      [&](Context& ctx, const Values& xs) {
        Array x = xs[0];
        std::vector<PendingCollective> pending;
        Values results;
        for (const Step& step : p.steps) {
          ctx.charge_compute(step.flops_per_device * (1 + ctx.device() % 3), 0);
          const int n = testkit::group_size(p.mesh, step.axes);
          if (step.started) {
            pending.push_back(start(ctx, step.op, x, AxisNames(step.axes), n, {step.stream}));
            continue;
          }
          Array y = apply(ctx, step.op, x, AxisNames(step.axes), n);
          results.push_back(reshape(y, {y.size()}));
          // Back to the input's shape, so that the next step fits whatever this one did.
          x = step.op == Op::all_gather     ? slice(y, 0, 0, x.shape()[0])
              : step.op == Op::psum_scatter ? concatenate(std::vector<Array>(n, y), 0)
                                            : y;
        }
        for (PendingCollective& started : pending) {
          Array y = started.wait();
          results.push_back(reshape(y, {y.size()}));
        }
        results.push_back(x);
        return results;
      },
      /*check_vma=*/false);
  outcome.log = machine.cost_log();
  return outcome;
}

// Everything in the cost log but how the time was found (messages carried, closed-form groups).
std::string describe(const sim::CostLog& log) {
  std::string s;
  for (const auto& r : log.collectives) {
    s += fmt::format("{} {} {} {}-{} {}/{}\n", r.call, r.algorithm, r.bytes, r.start_ps, r.end_ps,
                     r.algbw_bytes_per_s, r.busbw_bytes_per_s);
  }
  for (const auto& m : log.memory) {
    s += fmt::format("peak {}:", m.peak_bytes);
    for (const auto& point : m.timeline) {
      s += fmt::format(" {}={}", point.time_ps, point.bytes_in_use);
    }
    s += "\n";
  }
  for (const auto& c : log.compute_spans) {
    s += fmt::format("compute {} {}-{}\n", c.device, c.start_ps, c.end_ps);
  }
  for (std::int64_t end : log.device_end_ps) s += fmt::format("{} ", end);
  return s + fmt::format("end {}", log.end_ps);
}

RC_GTEST_PROP(FastPath, gives_the_bits_and_cost_log_of_carrying_every_message, ()) {
  const Program p = *program();
  const std::string topology = *topology_text(p.mesh.device_count());
  const std::optional<Algorithm> algorithm = *rc::gen::element<std::optional<Algorithm>>(
      std::nullopt, Algorithm::ring, Algorithm::bidirectional_ring, Algorithm::torus,
      Algorithm::bidirectional_torus);
  const bool cost_only = *rc::gen::arbitrary<bool>();
  const std::uint64_t seed = *testkit::seed();
  const sim::LinkSharing sharing = *rc::gen::element(sim::LinkSharing::fair, sim::LinkSharing::fifo);
  RC_TAG(topology);
  const Outcome fast = run(p, topology, algorithm, cost_only, /*fast_path=*/true, seed, sharing);
  const Outcome full = run(p, topology, algorithm, cost_only, /*fast_path=*/false, seed, sharing);
  RC_TAG(fast.log.closed_form_groups > 0 ? "fast path taken" : "no fast path");
  RC_ASSERT(full.log.closed_form_groups == 0u);
  RC_ASSERT(describe(fast.log) == describe(full.log));
  for (std::size_t d = 0; d < fast.outputs.size(); ++d) {
    for (std::size_t j = 0; j < fast.outputs[d].size(); ++j) {
      RC_ASSERT(fast.outputs[d][j].bitwise_equal(full.outputs[d][j]));
    }
  }
}

// ---- Where the fast path applies, it is taken.

std::int64_t psum_time_ps(const std::string& topology, int devices, Algorithm algorithm,
                          bool fast_path, std::uint64_t* closed_form_groups) {
  const Program p{Mesh({devices}, {"i"}), {{Op::psum, {"i"}, 0.0}}};
  const Outcome outcome = run(p, topology, algorithm, true, fast_path, 1);
  *closed_form_groups = outcome.log.closed_form_groups;
  const sim::CollectiveRecord& record = outcome.log.collectives.at(0);
  return record.end_ps - record.start_ps;
}

TEST(FastPath, TimesTheTorusAlgorithmOnAHierarchicalMachineByItsTwoLinks) {
  std::uint64_t fast_groups = 0, full_groups = 0;
  const std::int64_t fast = psum_time_ps("hierarchical:4", 16, Algorithm::torus, true, &fast_groups);
  const std::int64_t full = psum_time_ps("hierarchical:4", 16, Algorithm::torus, false, &full_groups);
  EXPECT_EQ(fast_groups, 1u);
  EXPECT_EQ(full_groups, 0u);
  EXPECT_EQ(fast, full);
  // Inside a node: up to the node switch and down, 3 GB/s and 0.7 us each way; between nodes
  // the same through the network switch at 1 GB/s and 2.3 us.
  CollectiveShape shape;
  shape.kind = CollectiveKind::all_reduce;
  shape.ranks = 16;
  shape.elements = 96;  // 48 rows of 2 (run() above)
  shape.element_bytes = 4;
  shape.torus_dims = {4, 4};
  const std::vector<cost_model::RouteCost> per_dimension = {{4'600'000, 1'000'000'000},
                                                            {1'400'000, 3'000'000'000}};
  EXPECT_EQ(fast,
            collectives::phased_closed_form_time_ps(Algorithm::torus, shape, per_dimension));
}

TEST(FastPath, RingOnASwitchIsTimedByTheClosedForm) {
  std::uint64_t groups = 0;
  const std::int64_t fast = psum_time_ps("switch", 12, Algorithm::ring, true, &groups);
  std::uint64_t none = 0;
  EXPECT_EQ(groups, 1u);
  EXPECT_EQ(fast, psum_time_ps("switch", 12, Algorithm::ring, false, &none));
}

TEST(FastPath, IsNotTakenWhereARingHopCrossesSeveralLinks) {
  // A mesh has no wrap-around link: the ring's last hop crosses the mesh, over other hops' links.
  const Program p{Mesh({9}, {"i"}), {{Op::psum, {"i"}, 0.0}}};
  const Outcome outcome = run(p, "mesh", Algorithm::ring, true, true, 1);
  ASSERT_EQ(outcome.log.collectives.at(0).algorithm, "ring");
  EXPECT_EQ(outcome.log.closed_form_groups, 0u);
}

}  // namespace
}  // namespace spmd
