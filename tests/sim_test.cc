// The simulator against the reference: random meshes, topologies, algorithms, ops, dtypes and
// sizes give the reference's bits (folded in the algorithm's order); uncontended times equal the
// closed forms; runs repeat exactly; deadlocks and out-of-memory are reported, never hung.
// Case count from RC_PARAMS (CI: max_success=1000).

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <limits>

#include "backends/sim_backend.h"
#include "collectives/algorithm.h"
#include "cost_model/link_time.h"
#include "reference/reference_backend.h"
#include "sim/machine.h"
#include "sim/sim_errors.h"
#include "tests/error_of.h"
#include "tests/collective_ops.h"
#include "tests/generators.h"

namespace spmd {
namespace {

using test_errors::error_of;

using collectives::Algorithm;
using test_gen::run_per_device;

// The algorithms whose results the reference can fold in the same order: all but torus, whose
// order needs each group's grid.
std::vector<Algorithm> data_algorithms() {
  std::vector<Algorithm> algorithms;
  for (Algorithm a : collectives::all_algorithms()) {
    if (collectives::reduction_algorithm_of(a)) algorithms.push_back(a);
  }
  return algorithms;
}

sim::MachineSpec machine_for(const std::string& topology, int devices,
                             topology::LinkSpec link = {}) {
  sim::MachineSpec spec;
  spec.devices = devices;
  spec.topology = topology::topology_from_text(topology, devices, {.link = link});
  return spec;
}

// A topology that can hold `devices` devices.
rc::Gen<std::string> topology_text(int devices) {
  return rc::gen::exec([=] {
    std::vector<std::string> kinds = {"ring", "ring-uni",        "torus",
                                      "mesh", "fully_connected", "switch"};
    for (int k = 2; k < devices; ++k) {
      if (devices % k == 0) kinds.push_back("hierarchical:" + std::to_string(k));
    }
    return *rc::gen::elementOf(kinds);
  });
}

using test_ops::Op;

// One collective of `op` over `axes` on x; shapes are chosen by the caller to fit.
Array apply_open(Context& ctx, Op op, const Array& x, const AxisNames& axes, int n) {
  return test_ops::apply(ctx, op, x, axes, n, test_ops::Shift::open);
}

RC_GTEST_PROP(Simulator, results_equal_the_reference_folding_in_the_algorithms_order, ()) {
  const Mesh mesh = *testkit::mesh(1, 3, *rc::gen::element(8, 16, 64));
  const int devices = mesh.device_count();
  const std::string topology = *topology_text(devices);
  const Algorithm algorithm = *rc::gen::elementOf(data_algorithms());
  const Op op = *rc::gen::element(Op::psum, Op::pmean, Op::pmax, Op::pmin, Op::psum_scatter,
                                  Op::all_gather, Op::all_to_all, Op::ppermute);
  std::vector<std::string> names = *testkit::axis_subset(mesh);
  if (op == Op::ppermute) names = testkit::in_mesh_order(mesh, names);
  const int n = testkit::group_size(mesh, names);
  const DType dtype = *testkit::dtype_of(testkit::all_dtypes());
  RC_PRE(!(op == Op::psum_scatter && dtype == DType::bool_));  // JAX rejects it (errors_test)
  const bool splits = op == Op::psum_scatter || op == Op::all_to_all;
  const std::int64_t rows = splits ? n * *rc::gen::inRange(1, 4) : *rc::gen::inRange(1, 40);
  const Shape shape = {rows, *rc::gen::inRange<std::int64_t>(1, 5)};
  const std::int64_t chunk_bytes = *rc::gen::element<std::int64_t>(16, 64, 256, 2 << 20);
  RC_TAG(std::string(collectives::algorithm_name(algorithm)));

  sim::MachineSpec spec = machine_for(topology, devices);
  spec.pipeline_chunk_bytes = chunk_bytes;
  sim::SimOptions options;
  options.algorithm = algorithm;
  options.ring_by_rank = true;
  sim::Machine machine(spec, options);
  ReductionOrder order = order_for_algorithm(algorithm);
  order.nccl_chunk_bytes = chunk_bytes;
  ReferenceBackend reference(order, devices);

  const std::vector<Array> inputs =
      random_per_device(dtype, shape, devices, *testkit::seed());
  std::vector<Values> args;
  for (const Array& x : inputs) args.push_back({x});
  const AxisNames axes(names);
  const auto body = [&](Context& ctx, const Values& xs) {
    return Values{apply_open(ctx, op, xs[0], axes, n)};
  };
  const std::vector<Values> expected = run_per_device(reference, mesh, args, 1, body);
  const std::vector<Values> actual = run_per_device(machine, mesh, args, 1, body);
  for (int d = 0; d < devices; ++d) {
    const Array& e = expected[static_cast<std::size_t>(d)][0];
    const Array& a = actual[static_cast<std::size_t>(d)][0];
    RC_ASSERT(a.bitwise_equal(e));
  }
}

// ---- Time

// One cost-only all-reduce over every device: the time the cost log gives.
std::int64_t all_reduce_time_ps(sim::Machine& machine, std::int64_t elements) {
  const Mesh mesh({machine.device_count()}, {"i"});
  std::vector<Values> inputs(static_cast<std::size_t>(mesh.device_count()));
  machine.run(
      mesh, inputs,
      [&](Context& ctx, const Values&) {
        CollectiveCall call;
        call.op = CollectiveOp::psum;
        call.axes = AxisNames("i");
        ctx.collective_cost(call, DType::float32, {elements});
        return Values{};
      },
      /*check_vma=*/false);
  const sim::CollectiveRecord& record = machine.cost_log().collectives.at(0);
  return record.end_ps - record.start_ps;
}

// Where an algorithm's messages each have a link of their own: rings on rings, the torus
// algorithm on its torus, everything else fully connected.
std::string home_topology(Algorithm algorithm, int n) {
  switch (algorithm) {
    case Algorithm::ring: return "ring-uni";
    case Algorithm::bidirectional_ring: return "ring";
    case Algorithm::torus:
    case Algorithm::bidirectional_torus: return "torus";
    default: return "fully_connected";
  }
  (void)n;
}

struct ClosedFormCase {
  Algorithm algorithm;
  int devices;
  std::int64_t elements;
  std::int64_t latency_ps;
  std::int64_t bandwidth_bytes_per_s;
  std::int64_t chunk_bytes;
  sim::LinkSharing sharing = sim::LinkSharing::fair;
};

struct SimulatedAndClosedForm {
  bool supported = false;
  std::string algorithm_used;
  std::int64_t simulated_ps = 0;
  std::int64_t closed_form_ps = 0;
  std::vector<int> torus_dims;  // the home topology's
};

// A float32 all-reduce of the case's size alone on the algorithm's home topology.
SimulatedAndClosedForm simulate_and_close(const ClosedFormCase& c) {
  const topology::LinkSpec link{c.bandwidth_bytes_per_s, c.latency_ps};
  sim::MachineSpec spec = machine_for(home_topology(c.algorithm, c.devices), c.devices, link);
  spec.pipeline_chunk_bytes = c.chunk_bytes;
  spec.link_sharing = c.sharing;
  sim::SimOptions options;
  options.algorithm = c.algorithm;
  options.cost_only = true;
  sim::Machine machine(spec, options);

  collectives::CollectiveShape shape;
  shape.kind = collectives::CollectiveKind::all_reduce;
  shape.ranks = c.devices;
  shape.elements = c.elements;
  shape.element_bytes = 4;
  shape.ring = machine.topology().ring_order();
  shape.torus_dims = machine.topology().dims();
  shape.pipeline_chunk_bytes = c.chunk_bytes;
  SimulatedAndClosedForm result;
  result.supported = collectives::supports(c.algorithm, shape);
  result.torus_dims = shape.torus_dims;
  if (!result.supported) return result;
  result.simulated_ps = all_reduce_time_ps(machine, c.elements);
  result.algorithm_used = machine.cost_log().collectives.at(0).algorithm;
  result.closed_form_ps =
      collectives::closed_form_time_ps(c.algorithm, shape, c.latency_ps, c.bandwidth_bytes_per_s);
  return result;
}

RC_GTEST_PROP(Simulator, uncontended_time_equals_the_closed_form, ()) {
  ClosedFormCase c;
  c.algorithm = *rc::gen::element(Algorithm::direct, Algorithm::ring, Algorithm::bidirectional_ring,
                                  Algorithm::halving_doubling, Algorithm::binary_tree,
                                  Algorithm::double_binary_tree, Algorithm::torus,
                                  Algorithm::bidirectional_torus);
  c.devices = *rc::gen::inRange(1, 65);
  if (c.algorithm == Algorithm::halving_doubling) c.devices = 1 << *rc::gen::inRange(0, 7);
  c.elements = *rc::gen::inRange<std::int64_t>(0, 1 << 20);
  c.latency_ps = *rc::gen::inRange<std::int64_t>(0, 5'000'000);
  c.bandwidth_bytes_per_s = *rc::gen::element<std::int64_t>(1'000'000'000, 25'000'000'000,
                                                            100'000'000'000, 450'000'000'000, 3);
  c.chunk_bytes = *rc::gen::element<std::int64_t>(64, 4096, 1 << 20, 2 << 20);
  // Uncontended, both link sharing models give a message alone the same time.
  c.sharing = *rc::gen::element(sim::LinkSharing::fair, sim::LinkSharing::fifo);
  // Two devices have one link each way: a two-way ring's halves share it.
  RC_PRE(!(c.algorithm == Algorithm::bidirectional_ring && c.devices == 2));
  const SimulatedAndClosedForm result = simulate_and_close(c);
  RC_PRE(result.supported);
  // Likewise a torus dimension of two: the bidirectional torus's two directions share its link.
  RC_PRE(!(c.algorithm == Algorithm::bidirectional_torus &&
           std::ranges::count(result.torus_dims, 2) > 0));
  RC_ASSERT(result.algorithm_used == std::string(collectives::algorithm_name(c.algorithm)));
  RC_ASSERT(result.simulated_ps == result.closed_form_ps);
}

// serialization_ps divides in 64 bits where bytes * 1e12 fits: the quotient the 128-bit formula
// gives, on both sides of that bound.
RC_GTEST_PROP(Simulator, serialization_time_is_exact_in_64_and_128_bits, ()) {
  const std::int64_t bytes = *rc::gen::oneOf(
      rc::gen::inRange<std::int64_t>(0, 20'000'000),
      rc::gen::element<std::int64_t>(9'223'371, 9'223'372, 9'223'373),
      rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 40));
  const std::int64_t bandwidth = *rc::gen::oneOf(
      rc::gen::inRange<std::int64_t>(1, 1000),
      rc::gen::inRange<std::int64_t>(1'000'000'000'000, std::numeric_limits<std::int64_t>::max()));
  const WideInt numerator = static_cast<WideInt>(bytes) * 1'000'000'000'000;
  const WideInt exact = (numerator + bandwidth - 1) / bandwidth;
  if (exact > std::numeric_limits<std::int64_t>::max()) {
    // Beyond the clock: an error naming the bytes and bandwidth, never a wrapped time.
    RC_ASSERT_THROWS_AS(cost_model::serialization_ps(bytes, bandwidth), Error);
  } else {
    RC_ASSERT(cost_model::serialization_ps(bytes, bandwidth) == static_cast<std::int64_t>(exact));
  }
}

TEST(Simulator, DoubleTreeHalvesTurnToBroadcastTogether) {
  // Found by the property above: with an odd piece count the second tree has one piece fewer;
  // had it turned to broadcast a step early, its first broadcast would share a link with the
  // first tree's last reduce and the time would exceed the closed form by one piece.
  for (sim::LinkSharing sharing : {sim::LinkSharing::fair, sim::LinkSharing::fifo}) {
    const SimulatedAndClosedForm result =
        simulate_and_close({.algorithm = Algorithm::double_binary_tree,
                            .devices = 2,
                            .elements = 4257,
                            .latency_ps = 0,
                            .bandwidth_bytes_per_s = 3,
                            .chunk_bytes = 64,
                            .sharing = sharing});
    ASSERT_TRUE(result.supported);
    EXPECT_EQ(result.algorithm_used, "double_binary_tree");
    EXPECT_EQ(result.simulated_ps, result.closed_form_ps);
  }
}

TEST(Simulator, TransfersSharingALinkWaitForEachOtherUnderFifo) {
  // Four devices on a one-way ring; every device sends two hops ahead, so every link carries two
  // messages and they queue: the last leaves after three serializations. (Under fair sharing,
  // the default, all four take two serializations: link_sharing_test.)
  sim::MachineSpec spec =
      machine_for("ring-uni", 4, {.bandwidth_bytes_per_s = 1'000'000'000, .latency_ps = 1'000'000});
  spec.link_sharing = sim::LinkSharing::fifo;
  sim::Machine machine(spec);
  const Mesh mesh({4}, {"i"});
  std::vector<Values> inputs;
  for (int d = 0; d < 4; ++d) inputs.push_back({Array(DType::float32, {250})});  // 1000 bytes
  machine.run(
      mesh, inputs,
      [](Context& ctx, const Values& xs) {
        return Values{ctx.ppermute(xs[0], AxisNames("i"), {{0, 2}, {1, 3}, {2, 0}, {3, 1}})};
      },
      false);
  const std::int64_t serialization = cost_model::serialization_ps(1000, 1'000'000'000);
  const sim::CollectiveRecord& record = machine.cost_log().collectives.at(0);
  EXPECT_EQ(record.end_ps - record.start_ps, 4 * serialization + 2 * 1'000'000);
  EXPECT_EQ(machine.cost_log().link_transfers, 4u);
}

TEST(Simulator, ComputeIsChargedAsARoofline) {
  sim::MachineSpec spec = machine_for("ring", 2);
  spec.peak_flops_per_s = 1e12;                           // 1 FLOP per ps
  spec.memory_bandwidth_bytes_per_s = 1'000'000'000'000;  // 1 byte per ps
  sim::Machine machine(spec);
  const Mesh mesh({2}, {"i"});
  machine.run(
      mesh, {{}, {}},
      [](Context& ctx, const Values&) {
        ctx.charge_compute(5000, 100);  // compute bound: 5000 ps
        ctx.charge_compute(10, 7000);   // memory bound: 7000 ps
        return Values{};
      },
      false);
  const sim::CostLog& log = machine.cost_log();
  EXPECT_EQ(log.compute_ps, (std::vector<std::int64_t>{12000, 12000}));
  EXPECT_EQ(log.end_ps, 12000);
  ASSERT_EQ(log.compute_spans.size(), 4u);
  EXPECT_EQ(log.compute_spans[1].start_ps, 5000);
}

TEST(Simulator, ACollectiveStartsWhenItsLastMemberArrives) {
  sim::MachineSpec spec = machine_for(
      "fully_connected", 2, {.bandwidth_bytes_per_s = 1'000'000'000'000, .latency_ps = 0});
  spec.peak_flops_per_s = 1e12;
  sim::Machine machine(spec, {.algorithm = Algorithm::direct});
  const Mesh mesh({2}, {"i"});
  machine.run(
      mesh, {{Array(DType::float32, {1})}, {Array(DType::float32, {1})}},
      [](Context& ctx, const Values& xs) {
        if (ctx.device() == 1) ctx.charge_compute(3000, 0);
        return Values{ctx.psum(xs[0], AxisNames("i"))};
      },
      false);
  const sim::CostLog& log = machine.cost_log();
  EXPECT_EQ(log.collectives.at(0).start_ps, 3000);
  EXPECT_EQ(log.collectives.at(0).end_ps, 3000 + 4);  // 4 bytes at 1 byte/ps
  EXPECT_EQ(log.device_end_ps, (std::vector<std::int64_t>{3004, 3004}));
}

// ---- Determinism

std::string describe(const sim::CostLog& log) {
  std::string s;
  for (const auto& r : log.collectives) {
    s += r.call + " " + r.algorithm + " " + std::to_string(r.bytes) + " " +
         std::to_string(r.start_ps) + "-" + std::to_string(r.end_ps) + "\n";
  }
  for (const auto& m : log.memory) {
    s += "peak " + std::to_string(m.peak_bytes) + ":";
    for (const auto& p : m.timeline)
      s += " " + std::to_string(p.time_ps) + "=" + std::to_string(p.bytes_in_use);
    s += "\n";
  }
  for (const auto& c : log.compute_spans) {
    s += "compute " + std::to_string(c.device) + " " + std::to_string(c.start_ps) + "\n";
  }
  return s + "end " + std::to_string(log.end_ps) + " transfers " +
         std::to_string(log.link_transfers);
}

RC_GTEST_PROP(Simulator, two_runs_give_identical_results_and_logs, ()) {
  const Mesh mesh = *testkit::mesh(2, 2, 16);
  const std::string topology = *topology_text(mesh.device_count());
  const std::uint64_t seed = *testkit::seed();
  const std::vector<std::string> names = mesh.axis_names();
  const sim::LinkSharing sharing = *rc::gen::element(sim::LinkSharing::fair, sim::LinkSharing::fifo);
  const auto run = [&](std::vector<Values>& outputs) {
    sim::MachineSpec spec = machine_for(topology, mesh.device_count());
    spec.link_sharing = sharing;
    sim::Machine machine(spec);
    std::vector<Values> args;
    for (const Array& x :
         random_per_device(DType::float32, {8, 3}, mesh.device_count(), seed)) {
      args.push_back({x});
    }
    outputs = run_per_device(machine, mesh, args, 1, [&](Context& ctx, const Values& xs) {
      ctx.charge_compute(1e6 * (ctx.device() % 3), 4096);
      Array y = ctx.psum(xs[0], AxisNames(names[0]));
      ctx.charge_compute(5e5, 0);
      y = ctx.all_gather(y, AxisNames(names[1]), 0, true);
      // Over the axis y varies over: JAX 0.12 refuses a pmax over both (y is invariant along
      // names[0] after the psum).
      return Values{ctx.pmax(y, AxisNames(names[1]))};
    });
    return describe(machine.cost_log());
  };
  std::vector<Values> first_outputs, second_outputs;
  const std::string first = run(first_outputs);
  const std::string second = run(second_outputs);
  RC_ASSERT(first == second);
  for (std::size_t d = 0; d < first_outputs.size(); ++d) {
    RC_ASSERT(first_outputs[d][0].bitwise_equal(second_outputs[d][0]));
  }
}

// ---- Deadlocks and memory

// The error a run of `program` on 4 ring devices raises, each device holding a float32[3].
std::string error_on_ring4(const DeviceFunction& program) {
  sim::Machine machine(machine_for("ring", 4));
  const Mesh mesh({4}, {"i"});
  const std::vector<Values> inputs(4, Values{Array(DType::float32, {3})});
  return error_of([&] { machine.run(mesh, inputs, program, false); });
}

std::string error_on_machine(sim::Machine& machine) {
  const Mesh mesh({4}, {"i"});
  const std::vector<Values> inputs(4, Values{Array(DType::float32, {3})});
  return error_of([&] {
    machine.run(
        mesh, inputs,
        [](Context& ctx, const Values& xs) { return Values{ctx.psum(xs[0], AxisNames("i"))}; },
        false);
  });
}

TEST(Simulator, DevicesThatDisagreeAreReportedAsADeadlock) {
  const std::string message = error_on_ring4([](Context& ctx, const Values& xs) {
    if (ctx.device() == 2) return Values{ctx.pmax(xs[0], AxisNames("i"))};
    return Values{ctx.psum(xs[0], AxisNames("i"))};
  });
  EXPECT_NE(message.find("deadlock: devices disagree at collective #0"), std::string::npos)
      << message;
  EXPECT_NE(message.find("device 2 waits in pmax('i') of float32[3]"), std::string::npos)
      << message;
}

TEST(Simulator, ADeviceThatNeverArrivesIsReportedNotHung) {
  const std::string message = error_on_ring4([](Context& ctx, const Values& xs) {
    if (ctx.device() == 3) return Values{xs[0]};
    return Values{ctx.psum(xs[0], AxisNames("i"))};
  });
  EXPECT_EQ(message,
            "deadlock: no device can proceed: devices 0-2 wait in psum('i') of float32[3] "
            "(collective #0); device 3 finished after 0 collective(s)");
}

// A group whose members all arrive still must not run when other devices finished without the
// collective: JAX runs it on every device, and the reference reports a deadlock.
TEST(Simulator, ACollectiveSomeRowsSkipIsTheReferencesDeadlock) {
  const Mesh mesh({2, 4}, {"x", "y"});
  const std::vector<Values> inputs(8, Values{Array(DType::float32, {3})});
  const DeviceFunction second_row_skips = [](Context& ctx, const Values& xs) {
    if (ctx.device() >= 4) return Values{xs[0]};  // x = 1
    return Values{ctx.psum(xs[0], AxisNames("y"))};
  };
  sim::Machine machine(machine_for("ring", 8));
  ReferenceBackend reference;
  const std::string expected =
      "deadlock: no device can proceed: devices 0-3 wait in psum('y') of float32[3] "
      "(collective #0); devices 4-7 finished after 0 collective(s)";
  EXPECT_EQ(error_of([&] { reference.run(mesh, inputs, second_row_skips, false); }), expected);
  EXPECT_EQ(error_of([&] { machine.run(mesh, inputs, second_row_skips, false); }), expected);
  // Finished first, then the others start it: the same report.
  const DeviceFunction first_row_skips = [](Context& ctx, const Values& xs) {
    if (ctx.device() < 4) return Values{xs[0]};
    return Values{ctx.psum(xs[0], AxisNames("y"))};
  };
  EXPECT_EQ(error_of([&] { machine.run(mesh, inputs, first_row_skips, false); }),
            "deadlock: no device can proceed: devices 0-3 finished after 0 collective(s); "
            "devices 4-7 wait in psum('y') of float32[3] (collective #0)");
  // The first row's groups run before the second row finishes without its second psum.
  const DeviceFunction second_row_stops_early = [](Context& ctx, const Values& xs) {
    Array x = ctx.psum(xs[0], AxisNames("y"));
    if (ctx.device() >= 4) return Values{x};
    return Values{ctx.psum(x, AxisNames("y"))};
  };
  const std::string stopped_early =
      "deadlock: no device can proceed: devices 0-3 wait in psum('y') of float32[3] "
      "(collective #1); devices 4-7 finished after 1 collective(s)";
  EXPECT_EQ(error_of([&] { reference.run(mesh, inputs, second_row_stops_early, false); }),
            stopped_early);
  EXPECT_EQ(error_of([&] { machine.run(mesh, inputs, second_row_stops_early, false); }),
            stopped_early);
  // The second row computes first, so the first row's second psum has run and the first row has
  // finished before the second row finishes: found when the run ends.
  const DeviceFunction second_row_late_and_short = [](Context& ctx, const Values& xs) {
    if (ctx.device() >= 4) ctx.charge_compute(1e12, 0);
    Array x = ctx.psum(xs[0], AxisNames("y"));
    if (ctx.device() >= 4) return Values{x};
    return Values{ctx.psum(x, AxisNames("y"))};
  };
  EXPECT_EQ(error_of([&] { machine.run(mesh, inputs, second_row_late_and_short, false); }),
            stopped_early);
}

// Fibers the host cannot make are an error naming the count and the stacks, not a terminate
// for the fibers already made.
TEST(Simulator, FibersTheHostCannotMakeAreAnError) {
  sim::Machine machine(machine_for("ring", 4), {.fiber_stack_bytes = std::size_t{1} << 44});
  const std::string message = error_on_machine(machine);
  EXPECT_NE(message.find("the host could not make 4 device fibers with 16 TiB stacks"),
            std::string::npos)
      << message;
}

TEST(Simulator, OutOfMemoryNamesDeviceOperationAndSizes) {
  sim::MachineSpec spec = machine_for("ring", 2);
  spec.memory_bytes = 6000;
  sim::Machine machine(spec, {.algorithm = Algorithm::ring});
  const Mesh mesh({2}, {"i"});
  std::vector<Values> inputs(2, Values{Array(DType::float32, {1000})});  // 4000 bytes each
  const std::string message = error_of([&] {
    machine.run(
        mesh, inputs,
        [](Context& ctx, const Values& xs) { return Values{ctx.psum(xs[0], AxisNames("i"))}; },
        false);
  });
  EXPECT_NE(message.find("out of memory on device 0"), std::string::npos) << message;
  EXPECT_NE(message.find("psum('i') buffers: requested 6000 bytes with 4000 in use of a "
                         "capacity of 6000 bytes"),
            std::string::npos)
      << message;
}

TEST(Simulator, ProgramMemoryIsHeldUntilReleased) {
  sim::MachineSpec spec = machine_for("ring", 2);
  spec.memory_bytes = 1000;
  sim::Machine machine(spec);
  const Mesh mesh({2}, {"i"});
  machine.run(
      mesh, {{}, {}},
      [](Context& ctx, const Values&) {
        ctx.hold_memory(600, "parameters");
        ctx.release_memory(600);
        ctx.hold_memory(900, "activations");
        return Values{};
      },
      false);
  EXPECT_EQ(machine.cost_log().memory.at(1).peak_bytes, 900);
  const std::string message = error_of([&] {
    machine.run(
        mesh, {{}, {}},
        [](Context& ctx, const Values&) {
          ctx.hold_memory(600, "parameters");
          ctx.hold_memory(600, "gradients");
          return Values{};
        },
        false);
  });
  EXPECT_NE(message.find("in gradients: requested 600 bytes with 600 in use of a capacity of "
                         "1000 bytes"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace spmd
