// Started collectives (Context::*_start, PendingCollective::wait): on the simulator a device
// computes while its collectives run, and a wait costs only what its compute did not cover;
// streams serialize, independent collectives share links; the results are the blocking ones
// bit for bit, on the simulator and on the reference; misuse is reported.
// Case count from RC_PARAMS (CI: max_success=1000).

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "collectives/algorithm.h"
#include "cost_model/roofline.h"
#include "reference/reference_backend.h"
#include "sim/machine.h"
#include "tests/error_of.h"
#include "tests/test_machines.h"
#include "tests/collective_ops.h"
#include "tests/generators.h"

namespace spmd {
namespace {

using collectives::Algorithm;
using test_errors::error_of;
using test_gen::run_per_device;

using test_machines::machine_for;

CollectiveCall psum_call(const std::string& axis = "i") {
  CollectiveCall call;
  call.op = CollectiveOp::psum;
  call.axes = AxisNames(axis);
  return call;
}

// ---- Overlap is exact

struct OverlapCase {
  int devices = 4;
  std::int64_t elements = 1000;
  std::int64_t latency_ps = 0;
  std::int64_t bandwidth_bytes_per_s = 1'000'000'000;
  double flops = 0;  // the compute between start and wait (or before the blocking call)
};

// A float32 ring all-reduce on a one-way ring (where the simulation equals the closed form) and
// `c.flops` of compute, started-then-computed-then-waited or computed-then-blocking; returns
// when the run ends.
std::int64_t run_overlap_case(const OverlapCase& c, bool started) {
  sim::Machine machine(machine_for("ring-uni", c.devices, {c.bandwidth_bytes_per_s, c.latency_ps}),
                       {.cost_only = true, .algorithm = Algorithm::ring});
  const Mesh mesh({c.devices}, {"i"});
  machine.run(
      mesh, std::vector<Values>(static_cast<std::size_t>(c.devices)),
      [&](Context& ctx, const Values&) {
        if (started) {
          PendingCollective h = ctx.collective_cost_start(psum_call(), DType::float32, {c.elements});
          ctx.charge_compute(c.flops, 0);
          h.wait();
        } else {
          ctx.charge_compute(c.flops, 0);
          ctx.collective_cost(psum_call(), DType::float32, {c.elements});
        }
        return Values{};
      },
      false);
  return machine.cost_log().end_ps;
}

std::int64_t ring_closed_form_ps(const OverlapCase& c) {
  collectives::CollectiveShape shape;
  shape.kind = collectives::CollectiveKind::all_reduce;
  shape.ranks = c.devices;
  shape.elements = c.elements;
  shape.element_bytes = 4;
  const sim::Machine machine(machine_for("ring-uni", c.devices));
  shape.ring = machine.topology().ring_order();
  return collectives::closed_form_time_ps(Algorithm::ring, shape, c.latency_ps,
                                          c.bandwidth_bytes_per_s);
}

std::int64_t compute_ps(double flops) {
  return cost_model::compute_time_ps(flops, 0, 1e12, 1'000'000'000'000);
}

RC_GTEST_PROP(AsyncCollectives, overlap_is_exact_max_of_compute_and_communication, ()) {
  OverlapCase c;
  c.devices = *rc::gen::inRange(2, 9);
  c.elements = *rc::gen::inRange<std::int64_t>(1, 1 << 16);
  c.latency_ps = *rc::gen::inRange<std::int64_t>(0, 2'000'000);
  c.bandwidth_bytes_per_s = *rc::gen::element<std::int64_t>(1'000'000'000, 25'000'000'000, 3);
  const std::int64_t a = ring_closed_form_ps(c);
  c.flops = static_cast<double>(*rc::gen::inRange<std::int64_t>(0, 2 * a + 2));
  const std::int64_t compute = compute_ps(c.flops);
  RC_ASSERT(run_overlap_case(c, true) == std::max(compute, a));
  RC_ASSERT(run_overlap_case(c, false) == compute + a);
}

// ---- Streams

// Two equal all-reduces started at once on `streams`, then both waited: when the run ends.
std::int64_t two_all_reduces_ps(int first_stream, int second_stream, const OverlapCase& c) {
  sim::Machine machine(machine_for("ring-uni", c.devices, {c.bandwidth_bytes_per_s, c.latency_ps}),
                       {.cost_only = true, .algorithm = Algorithm::ring});
  const Mesh mesh({c.devices}, {"i"});
  machine.run(
      mesh, std::vector<Values>(static_cast<std::size_t>(c.devices)),
      [&](Context& ctx, const Values&) {
        PendingCollective a = ctx.collective_cost_start(psum_call(), DType::float32, {c.elements},
                                                        {.stream = first_stream});
        PendingCollective b = ctx.collective_cost_start(psum_call(), DType::float32, {c.elements},
                                                        {.stream = second_stream});
        b.wait();
        a.wait();
        return Values{};
      },
      false);
  return machine.cost_log().end_ps;
}

TEST(AsyncCollectives, CollectivesOnOneStreamRunOneAfterAnother) {
  const OverlapCase c{.devices = 4, .elements = 4096, .latency_ps = 1'000'000};
  const std::int64_t a = ring_closed_form_ps(c);
  EXPECT_EQ(two_all_reduces_ps(0, 0, c), 2 * a);
  // Different streams are independent of each other.
  EXPECT_LT(two_all_reduces_ps(0, 1, c), 2 * a);
}

TEST(AsyncCollectives, IndependentCollectivesOverlapAndShareLinks) {
  const OverlapCase c{.devices = 4, .elements = 4096, .latency_ps = 1'000'000};
  const std::int64_t a = ring_closed_form_ps(c);
  const std::int64_t both = two_all_reduces_ps(-1, -1, c);
  EXPECT_GT(both, a);      // they queue on the same links
  EXPECT_LT(both, 2 * a);  // but their latencies overlap
}

TEST(AsyncCollectives, AStreamCollectiveStartsAfterItsPredecessorFinishedOnEveryMember) {
  // Device 1 starts the second all-reduce early, but its first one ends at A: the second group
  // starts then and ends at 2A; the cost log shows its issue time and start apart.
  const OverlapCase c{.devices = 2, .elements = 1024};
  const std::int64_t a = ring_closed_form_ps(c);
  sim::Machine machine(machine_for("ring-uni", 2, {c.bandwidth_bytes_per_s, 0}),
                       {.cost_only = true, .algorithm = Algorithm::ring});
  machine.run(
      Mesh({2}, {"i"}), {{}, {}},
      [&](Context& ctx, const Values&) {
        PendingCollective first =
            ctx.collective_cost_start(psum_call(), DType::float32, {1024}, {.stream = 0});
        if (ctx.device() == 0) ctx.charge_compute(static_cast<double>(a) / 2, 0);
        PendingCollective second =
            ctx.collective_cost_start(psum_call(), DType::float32, {1024}, {.stream = 0});
        second.wait();
        first.wait();
        return Values{};
      },
      false);
  const sim::CostLog& log = machine.cost_log();
  ASSERT_EQ(log.collectives.size(), 2u);
  EXPECT_EQ(log.collectives[1].issue_ps, 0);
  EXPECT_EQ(log.collectives[1].start_ps, a);
  EXPECT_EQ(log.collectives[1].end_ps, 2 * a);
  EXPECT_EQ(log.end_ps, 2 * a);
}

TEST(AsyncCollectives, NegativeStreamsOtherThanMinusOneAreErrors) {
  ReferenceBackend reference;
  const std::string message = error_of([&] {
    reference.run(
        Mesh({2}, {"i"}), {{Array(DType::float32, {2})}, {Array(DType::float32, {2})}},
        [](Context& ctx, const Values& xs) {
          return Values{ctx.psum_start(xs[0], AxisNames("i"), std::nullopt, {.stream = -2}).wait()};
        },
        false);
  });
  EXPECT_EQ(message, "StartOptions::stream: -2, expected -1 (independent) or a stream number >= 0");
}

// ---- Exposed and overlapped communication, by hand

TEST(AsyncCollectives, ExposedAndOverlappedCommunicationByHand) {
  // 2 devices, direct, 1 byte/ps, no latency: a psum of float32[1000] takes 4000 ps.
  // Collective #0 started at 0 on both. Device 0 computes 1000 ps and waits 3000 (exposed 3000,
  // overlapped 1000); device 1 computes 6000 ps and does not wait (exposed 0, overlapped 4000).
  // Then a blocking psum: device 0 arrives at 4000, device 1 at 6000; it runs 6000-10000:
  // device 0 waits 6000 more, device 1 4000.
  sim::Machine machine(
      machine_for("fully_connected", 2,
                  {.bandwidth_bytes_per_s = 1'000'000'000'000, .latency_ps = 0}),
      {.algorithm = Algorithm::direct});
  const std::vector<Values> inputs(2, Values{Array(DType::float32, {1000})});
  machine.run(
      Mesh({2}, {"i"}), inputs,
      [](Context& ctx, const Values& xs) {
        PendingCollective h = ctx.psum_start(xs[0], AxisNames("i"));
        ctx.charge_compute(0, ctx.device() == 0 ? 1000 : 6000);  // memory bound: 1 byte/ps
        const Array y = h.wait();
        return Values{ctx.psum(y, AxisNames("i"))};
      },
      false);
  const sim::CostLog& log = machine.cost_log();
  ASSERT_EQ(log.collectives.size(), 2u);
  EXPECT_EQ(log.collectives[0].issue_ps, 0);
  EXPECT_EQ(log.collectives[0].start_ps, 0);
  EXPECT_EQ(log.collectives[0].end_ps, 4000);
  EXPECT_EQ(log.collectives[1].issue_ps, 4000);
  EXPECT_EQ(log.collectives[1].start_ps, 6000);
  EXPECT_EQ(log.collectives[1].end_ps, 10000);
  EXPECT_EQ(log.exposed_communication_ps, (std::vector<std::int64_t>{9000, 4000}));
  EXPECT_EQ(log.communication_in_flight_ps, (std::vector<std::int64_t>{8000, 8000}));
  EXPECT_EQ(log.overlapped_communication_ps, (std::vector<std::int64_t>{1000, 4000}));
  EXPECT_EQ(log.device_end_ps, (std::vector<std::int64_t>{10000, 10000}));
  ASSERT_EQ(log.steps.size(), 1u);
  EXPECT_EQ(log.steps[0].end_ps, 10000);
  EXPECT_EQ(log.steps[0].exposed_communication_ps, (std::vector<std::int64_t>{9000, 4000}));
  // Buffers (direct psum: 4000 work + 4000 received bytes) are held from the start call to
  // the end of the wait on each device: device 0 from 0 to 4000, device 1 from 0 to 6000.
  const std::vector<sim::MemoryPoint>& timeline = log.memory.at(1).timeline;
  ASSERT_GE(timeline.size(), 3u);
  EXPECT_EQ(timeline[0].time_ps, 0);
  EXPECT_EQ(timeline[0].bytes_in_use, 4000 + 8000);
  EXPECT_EQ(timeline[1].time_ps, 6000);
  EXPECT_EQ(timeline[1].bytes_in_use, 4000 + 8000);  // released and the second psum's held
}

TEST(AsyncCollectives, StepsAreJoinedByAppendRun) {
  sim::CostLog total;
  sim::CostLog step;
  step.end_ps = 100;
  step.device_end_ps = {100};
  step.compute_ps = {10};
  step.memory = {{}};
  step.exposed_communication_ps = {30};
  step.steps = {{0, 100, {100}, {30}, {5}}};
  sim::append_run(total, step);
  sim::append_run(total, step);
  ASSERT_EQ(total.steps.size(), 2u);
  EXPECT_EQ(total.steps[1].start_ps, 100);
  EXPECT_EQ(total.steps[1].end_ps, 200);
  EXPECT_EQ(total.steps[1].device_end_ps, (std::vector<std::int64_t>{200}));
  EXPECT_EQ(total.exposed_communication_ps, (std::vector<std::int64_t>{60}));
}

// ---- Results equal the blocking ones

using test_ops::apply;
using test_ops::Op;
using test_ops::start;

struct Step {
  Op op;
  std::vector<std::string> axes;
  int n;
  int stream;
  double flops;
};

RC_GTEST_PROP(AsyncCollectives, started_results_equal_blocking_results_bit_for_bit, ()) {
  const Mesh mesh = *testkit::mesh(1, 2, 8);
  const int devices = mesh.device_count();
  const DType dtype = *testkit::dtype_of(testkit::float_dtypes());
  const int count = *rc::gen::inRange(1, 5);
  std::vector<Step> steps;
  std::vector<Values> args(static_cast<std::size_t>(devices));
  const std::uint64_t seed = *testkit::seed();
  for (int k = 0; k < count; ++k) {
    Step step;
    step.op = *rc::gen::element(Op::psum, Op::pmean, Op::pmax, Op::pmin, Op::psum_scatter,
                                Op::all_gather, Op::all_to_all, Op::ppermute);
    step.axes = *testkit::axis_subset(mesh);
    if (step.op == Op::ppermute) step.axes = testkit::in_mesh_order(mesh, step.axes);
    step.n = testkit::group_size(mesh, step.axes);
    step.stream = *rc::gen::inRange(-1, 2);
    step.flops = *rc::gen::inRange(0, 100000);
    const bool splits = step.op == Op::psum_scatter || step.op == Op::all_to_all;
    const Shape shape = {splits ? step.n * *rc::gen::inRange(1, 3) : *rc::gen::inRange(1, 9), 2};
    const std::vector<Array> inputs =
        random_per_device(dtype, shape, devices, seed + static_cast<std::uint64_t>(k));
    for (int d = 0; d < devices; ++d) args[static_cast<std::size_t>(d)].push_back(inputs[static_cast<std::size_t>(d)]);
    steps.push_back(step);
  }
  // The waits in another order on each device: rotated by the device id.
  const std::vector<int> order = *testkit::permutation(count);
  const auto blocking = [&](Context& ctx, const Values& xs) {
    Values out;
    for (int k = 0; k < count; ++k) {
      const Step& s = steps[static_cast<std::size_t>(k)];
      ctx.charge_compute(s.flops, 0);
      out.push_back(apply(ctx, s.op, xs[static_cast<std::size_t>(k)], AxisNames(s.axes), s.n));
    }
    return out;
  };
  const auto started = [&](Context& ctx, const Values& xs) {
    std::vector<PendingCollective> handles;
    for (int k = 0; k < count; ++k) {
      const Step& s = steps[static_cast<std::size_t>(k)];
      handles.push_back(start(ctx, s.op, xs[static_cast<std::size_t>(k)], AxisNames(s.axes), s.n,
                              {.stream = s.stream}));
      ctx.charge_compute(s.flops, 0);
    }
    Values out(static_cast<std::size_t>(count));
    for (int j = 0; j < count; ++j) {
      const auto k = static_cast<std::size_t>(order[static_cast<std::size_t>((j + ctx.device()) % count)]);
      out[k] = handles[k].wait();
    }
    return out;
  };
  sim::Machine machine(machine_for("ring", devices), {.algorithm = Algorithm::direct});
  ReferenceBackend reference;
  const std::vector<Values> expected = run_per_device(machine, mesh, args, count, blocking);
  const std::vector<Values> sim_started = run_per_device(machine, mesh, args, count, started);
  const std::vector<Values> reference_started =
      run_per_device(reference, mesh, args, count, started);
  const std::vector<Values> reference_blocking =
      run_per_device(reference, mesh, args, count, blocking);
  for (std::size_t d = 0; d < expected.size(); ++d) {
    for (int k = 0; k < count; ++k) {
      const Array& e = expected[d][static_cast<std::size_t>(k)];
      RC_ASSERT(sim_started[d][static_cast<std::size_t>(k)].bitwise_equal(e));
      RC_ASSERT(reference_started[d][static_cast<std::size_t>(k)].bitwise_equal(e));
      RC_ASSERT(reference_blocking[d][static_cast<std::size_t>(k)].bitwise_equal(e));
    }
  }
}

// ---- Deadlocks and misuse

std::string error_on_ring4(const DeviceFunction& program) {
  sim::Machine machine(machine_for("ring", 4));
  const Mesh mesh({4}, {"i"});
  const std::vector<Values> inputs(4, Values{Array(DType::float32, {3})});
  return error_of([&] { machine.run(mesh, inputs, program, false); });
}

TEST(AsyncCollectives, ADeadlockReportListsPendingCollectives) {
  const std::string message = error_on_ring4([](Context& ctx, const Values& xs) {
    if (ctx.device() == 3) return Values{xs[0]};
    PendingCollective sum = ctx.psum_start(xs[0], AxisNames("i"));
    PendingCollective gathered = ctx.all_gather_start(xs[0], AxisNames("i"));
    const Array y = sum.wait();
    return Values{y, gathered.wait()};
  });
  EXPECT_EQ(message,
            "deadlock: no device can proceed: devices 0-2 wait in psum('i') of float32[3] "
            "(collective #0); pending: #1 all_gather('i', axis=0, tiled=False); device 3 "
            "finished after 0 collective(s)");
}

TEST(AsyncCollectives, DisagreementWithPendingCollectives) {
  const std::string message = error_on_ring4([](Context& ctx, const Values& xs) {
    PendingCollective sum = ctx.psum_start(xs[0], AxisNames("i"));
    if (ctx.device() == 3) return Values{ctx.pmax(xs[0], AxisNames("i")), sum.wait()};
    PendingCollective gathered = ctx.all_gather_start(xs[0], AxisNames("i"));
    Array g = gathered.wait();
    return Values{g, sum.wait()};
  });
  EXPECT_EQ(message,
            "deadlock: devices disagree at collective #1: devices 0-2 wait in all_gather('i', "
            "axis=0, tiled=False) of float32[3] (collective #1); pending: #0 psum('i'); device 3 "
            "waits in pmax('i') of float32[3] (collective #1); pending: #0 psum('i')");
}

TEST(AsyncCollectives, WaitingTwiceIsAnError) {
  const std::string message = error_on_ring4([](Context& ctx, const Values& xs) {
    PendingCollective sum = ctx.psum_start(xs[0], AxisNames("i"));
    sum.wait();
    return Values{sum.wait()};
  });
  EXPECT_EQ(message,
            "PendingCollective::wait: psum('i') of float32[3] on device 0 was already waited; "
            "expected one wait per start");
}

TEST(AsyncCollectives, AnEmptyHandleCannotBeWaited) {
  const std::string message = error_on_ring4([](Context& ctx, const Values& xs) {
    PendingCollective sum = ctx.psum_start(xs[0], AxisNames("i"));
    PendingCollective moved = std::move(sum);
    moved.wait();
    return Values{sum.wait()};  // NOLINT(bugprone-use-after-move): the point of the test
  });
  EXPECT_EQ(message,
            "PendingCollective::wait: the handle holds no collective (default-constructed or "
            "moved from); expected a handle from a *_start call");
}

TEST(AsyncCollectives, ADroppedHandleIsAnError) {
  const DeviceFunction drop = [](Context& ctx, const Values& xs) {
    { PendingCollective sum = ctx.psum_start(xs[0], AxisNames("i")); }
    return Values{xs[0]};
  };
  const std::string expected =
      "psum('i') of float32[3] started on device 0 was never waited (its PendingCollective was "
      "dropped); expected wait() on every started collective";
  EXPECT_EQ(error_on_ring4(drop), expected);
  ReferenceBackend reference;
  const std::vector<Values> inputs(4, Values{Array(DType::float32, {3})});
  EXPECT_EQ(error_of([&] { reference.run(Mesh({4}, {"i"}), inputs, drop, false); }), expected);
  // Also at the next collective, not only at the end.
  const std::string next = error_on_ring4([](Context& ctx, const Values& xs) {
    { PendingCollective sum = ctx.psum_start(xs[0], AxisNames("i")); }
    return Values{ctx.pmax(xs[0], AxisNames("i"))};
  });
  EXPECT_EQ(next, expected);
}

TEST(AsyncCollectives, AHandleFromAnotherDeviceIsAnError) {
  std::vector<PendingCollective*> shared(2, nullptr);
  sim::Machine machine(machine_for("ring", 2));
  const std::vector<Values> inputs(2, Values{Array(DType::float32, {3})});
  const auto program = [&](bool through_context) {
    return [&shared, through_context](Context& ctx, const Values& xs) {
      PendingCollective sum = ctx.psum_start(xs[0], AxisNames("i"));
      shared[static_cast<std::size_t>(ctx.device())] = &sum;
      if (ctx.device() == 1) {
        return Values{through_context ? ctx.wait(*shared[0]) : shared[0]->wait()};
      }
      return Values{sum.wait()};
    };
  };
  EXPECT_EQ(error_of([&] { machine.run(Mesh({2}, {"i"}), inputs, program(true), false); }),
            "wait: psum('i') of float32[3] started on device 0 waited on device 1; expected the "
            "device that started it");
  EXPECT_EQ(error_of([&] { machine.run(Mesh({2}, {"i"}), inputs, program(false), false); }),
            "PendingCollective::wait: collective #0 started on device 0 waited on device 1; "
            "expected the device that started it");
}

TEST(AsyncCollectives, OneDeviceAndEmptyAxesNeedNoWaitingBackend) {
  // The checks and shortcuts of the blocking form apply to starts: a one-device psum returns
  // its operand; an empty axis tuple leaves it unchanged. Both are waited like any other.
  sim::Machine machine(machine_for("fully_connected", 1));
  const Array x = Array::from_values<float>({2}, {1.5f, -0.0f});
  const std::vector<Values> out = machine.run(
      Mesh({1}, {"i"}), {{x}},
      [](Context& ctx, const Values& xs) {
        PendingCollective a = ctx.psum_start(xs[0], AxisNames("i"));
        PendingCollective b = ctx.pmax_start(xs[0], AxisNames());
        return Values{a.wait(), b.wait()};
      },
      false);
  EXPECT_TRUE(out[0][0].bitwise_equal(x));
  EXPECT_TRUE(out[0][1].bitwise_equal(x));
  EXPECT_TRUE(machine.cost_log().collectives.empty());
}

}  // namespace
}  // namespace spmd
