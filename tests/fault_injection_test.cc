// Fault injection in the simulator (sim/faults.h): stragglers and degraded links change time by
// exactly what they say and never values; failed devices and links end the collectives that
// need them with an error naming them; every fault is an event of the cost log and the trace;
// bad fault specs are one-line errors naming the field.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/faults.h"
#include "sim/machine.h"
#include "tests/error_of.h"
#include "tests/test_machines.h"
#include "topology/topology_spec.h"
#include "traces/chrome_trace.h"

namespace spmd {
namespace {

using test_errors::error_of;

using test_machines::machine_for;

std::vector<Values> iota_inputs(int devices, std::int64_t elements) {
  std::vector<Values> inputs;
  for (int d = 0; d < devices; ++d) {
    std::vector<float> values;
    for (std::int64_t i = 0; i < elements; ++i) values.push_back(0.1f * static_cast<float>(d * 7 + i));
    inputs.push_back({Array::from_values<float>({elements}, values)});
  }
  return inputs;
}

// Each device computes `flops`, then all-reduces its input over the mesh.
std::vector<Values> compute_then_psum(sim::Machine& machine, int devices, double flops) {
  const Mesh mesh({devices}, {"i"});
  return machine.run(
      mesh, iota_inputs(devices, 1024),
      [flops](Context& ctx, const Values& xs) {
        ctx.charge_compute(flops, 0);
        return Values{ctx.psum(xs[0], AxisNames("i"))};
      },
      false);
}

sim::Fault straggler(int device, double factor, std::int64_t at_ps) {
  return {.kind = sim::FaultKind::straggler, .device = device, .factor = factor, .at_ps = at_ps};
}

TEST(FaultInjection, AStragglerTakesFactorTimesAsLongAfterItsTime) {
  sim::MachineSpec spec = machine_for("ring", 2);
  spec.faults = {straggler(1, 3, 2000)};
  sim::Machine machine(spec);
  const Mesh mesh({2}, {"i"});
  machine.run(
      mesh, {{}, {}},
      [](Context& ctx, const Values&) {
        ctx.charge_compute(5000, 0);  // device 1: 2000 ps as before, the other 3000 ps x 3
        ctx.charge_compute(1000, 0);  // device 1: all after the fault, x 3
        return Values{};
      },
      false);
  const sim::CostLog& log = machine.cost_log();
  // Device 0 has no fault: its spans are the roofline's durations (about 5000 and 1000 ps).
  const std::int64_t first_ps = log.compute_spans.at(0).end_ps - log.compute_spans.at(0).start_ps;
  const std::int64_t second_ps = log.compute_ps.at(0) - first_ps;
  EXPECT_EQ(log.compute_ps.at(1), 2000 + (first_ps - 2000) * 3 + second_ps * 3);
  ASSERT_EQ(log.faults.size(), 1u);
  EXPECT_EQ(log.faults[0].kind, "straggler");
  EXPECT_EQ(log.faults[0].device, 1);
  EXPECT_EQ(log.faults[0].at_ps, 2000);
  EXPECT_EQ(log.faults[0].description, "straggler: device 1 computes 3x slower from 2 ns");
}

// A degraded link's time is the closed form's on a machine whose links are that slow; the
// results are the same bits as without the fault.
TEST(FaultInjection, DegradedLinksTimeACollectiveAsSlowerLinksDo) {
  for (const sim::LinkSharing sharing : {sim::LinkSharing::fifo, sim::LinkSharing::fair}) {
    SCOPED_TRACE(std::string(sim::link_sharing_name(sharing)));
    const topology::LinkSpec fast{.bandwidth_bytes_per_s = 100'000'000'000, .latency_ps = 1000};
    const topology::LinkSpec slow{.bandwidth_bytes_per_s = 25'000'000'000, .latency_ps = 1000};
    sim::MachineSpec healthy = machine_for("ring", 4, fast);
    healthy.link_sharing = sharing;
    sim::MachineSpec degraded = healthy;
    sim::Machine probe(healthy);
    for (const topology::Link& link : probe.topology().links()) {
      degraded.faults.push_back({.kind = sim::FaultKind::degraded, .link_from = link.from,
                                 .link_to = link.to, .factor = 0.25, .at_ps = 0});
    }
    sim::MachineSpec slow_machine = machine_for("ring", 4, slow);
    slow_machine.link_sharing = sharing;

    const sim::SimOptions ring{.algorithm = collectives::Algorithm::ring};
    sim::Machine with_fault(degraded, ring);
    sim::Machine without(healthy, ring);
    sim::Machine slower(slow_machine, ring);  // timed by the closed form (fast path)
    const std::vector<Values> faulted = compute_then_psum(with_fault, 4, 0);
    const std::vector<Values> healthy_results = compute_then_psum(without, 4, 0);
    compute_then_psum(slower, 4, 0);
    EXPECT_GT(slower.cost_log().closed_form_groups, 0u);
    EXPECT_EQ(with_fault.cost_log().closed_form_groups, 0u);  // faults: no fast path
    EXPECT_EQ(with_fault.cost_log().collectives.at(0).end_ps,
              slower.cost_log().collectives.at(0).end_ps);
    EXPECT_GT(with_fault.cost_log().end_ps, without.cost_log().end_ps);
    ASSERT_EQ(faulted.size(), healthy_results.size());
    for (std::size_t d = 0; d < faulted.size(); ++d) {
      EXPECT_TRUE(faulted[d][0].bitwise_equal(healthy_results[d][0])) << "device " << d;
    }
    EXPECT_EQ(with_fault.cost_log().faults.size(), probe.topology().links().size());
  }
}

TEST(FaultInjection, AStragglerChangesTimeButNotBits) {
  sim::MachineSpec spec = machine_for("ring", 4);
  sim::Machine without(spec);
  spec.faults = {straggler(2, 4, 0)};
  sim::Machine with_fault(spec);
  const std::vector<Values> a = compute_then_psum(without, 4, 1e6);
  const std::vector<Values> b = compute_then_psum(with_fault, 4, 1e6);
  for (std::size_t d = 0; d < a.size(); ++d) EXPECT_TRUE(a[d][0].bitwise_equal(b[d][0]));
  // Everybody waits for device 2 in the psum: it starts 3e6 ps later.
  EXPECT_EQ(with_fault.cost_log().collectives.at(0).start_ps,
            without.cost_log().collectives.at(0).start_ps + 3'000'000);
}

TEST(FaultInjection, AFailedDeviceFailsItsGroupsCollectivesNamingItAndTheWaiters) {
  sim::MachineSpec spec = machine_for("ring", 4);
  spec.faults = {{.kind = sim::FaultKind::failed_device, .device = 2, .at_ps = 500}};
  sim::Machine machine(spec);
  const std::string error = error_of([&] { compute_then_psum(machine, 4, 1000); });
  EXPECT_EQ(error,
            "psum('i') of float32[1024] (collective #0) failed: device 2 failed at 500 ps "
            "(failed_device fault); devices 0, 1, 3 waited");
  ASSERT_EQ(machine.cost_log().faults.size(), 1u);
  EXPECT_EQ(machine.cost_log().faults[0].kind, "failed_device");
}

TEST(FaultInjection, ACollectiveThatEndsBeforeTheDeviceFailsSucceeds) {
  sim::MachineSpec spec = machine_for("ring", 4);
  spec.faults = {{.kind = sim::FaultKind::failed_device, .device = 2, .at_ps = 1'000'000'000}};
  sim::Machine machine(spec);
  EXPECT_EQ(compute_then_psum(machine, 4, 0).size(), 4u);
  EXPECT_TRUE(machine.cost_log().faults.empty());  // the run ended before the fault's time
}

TEST(FaultInjection, AFailedLinkFailsTheCollectiveThatNeedsItNamingBoth) {
  // A one-way ring: the message from 1 to 2 has no other way than link 1-2, so no detour.
  sim::MachineSpec spec = machine_for("ring-uni", 4);
  spec.faults = {{.kind = sim::FaultKind::failed_link, .link_from = 1, .link_to = 2, .at_ps = 0}};
  sim::Machine machine(spec, {.algorithm = collectives::Algorithm::ring});
  const std::string error = error_of([&] { compute_then_psum(machine, 4, 0); });
  EXPECT_NE(error.find("psum('i') (collective #0)"), std::string::npos) << error;
  EXPECT_NE(error.find("link 1-2 (ring)"), std::string::npos) << error;
  EXPECT_NE(error.find("failed_link fault"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST(FaultInjection, MessagesGoAroundAFailedLinkWhereTheTopologyAllows) {
  // A two-way ring of 4: from 1 to 2 the detour is 1-0-3-2 the other way round.
  sim::MachineSpec spec = machine_for("ring", 4, {.bandwidth_bytes_per_s = 1'000'000'000'000,
                                                  .latency_ps = 1000});
  sim::Machine healthy(spec, {.algorithm = collectives::Algorithm::ring});
  const std::vector<Values> healthy_outputs = compute_then_psum(healthy, 4, 0);
  spec.faults = {{.kind = sim::FaultKind::failed_link, .link_from = 1, .link_to = 2, .at_ps = 0}};
  sim::Machine faulty(spec, {.algorithm = collectives::Algorithm::ring});
  const std::vector<Values> faulty_outputs = compute_then_psum(faulty, 4, 0);
  for (std::size_t d = 0; d < healthy_outputs.size(); ++d) {
    EXPECT_TRUE(faulty_outputs[d][0].bitwise_equal(healthy_outputs[d][0])) << "device " << d;
  }
  // The ring's 6 steps each wait for the message from 1 to 2: 3 hops instead of 1, over the
  // backward links the forward ring leaves free, so 2 more latencies of 1000 ps per step.
  EXPECT_EQ(faulty.cost_log().end_ps, healthy.cost_log().end_ps + 6 * 2 * 1000);
  ASSERT_EQ(faulty.cost_log().faults.size(), 1u);
  EXPECT_EQ(faulty.cost_log().faults[0].kind, "failed_link");
}

TEST(FaultInjection, FaultsAreInstantEventsOfTheTrace) {
  sim::MachineSpec spec = machine_for("ring", 2);
  spec.faults = {straggler(1, 2, 10),
                 {.kind = sim::FaultKind::degraded, .link_from = 0, .link_to = 1, .factor = 0.5,
                  .at_ps = 20}};
  sim::Machine machine(spec);
  compute_then_psum(machine, 2, 1000);
  const nlohmann::json trace = traces::chrome_trace(machine.cost_log(), {"m", 2});
  std::vector<nlohmann::json> faults;
  for (const nlohmann::json& event : trace["traceEvents"]) {
    if (event.value("cat", "") == "fault") faults.push_back(event);
  }
  ASSERT_EQ(faults.size(), 2u);
  EXPECT_EQ(faults[0]["ph"], "i");
  EXPECT_EQ(faults[0]["pid"], 1);
  EXPECT_EQ(faults[0]["s"], "p");
  EXPECT_EQ(faults[1]["s"], "g");
  EXPECT_EQ(faults[1]["name"], "degraded: link 0-1 at 0.5x bandwidth from 20 ps");
}

TEST(FaultInjection, FlagsParseEveryKind) {
  EXPECT_EQ(sim::fault_from_flag("straggler:device=3,factor=2,at=1ms"), straggler(3, 2, 1'000'000'000));
  const sim::Fault link = sim::fault_from_flag("failed_link:link=2-3,at=5us");
  EXPECT_EQ(link.link_from, 2);
  EXPECT_EQ(link.link_to, 3);
  EXPECT_EQ(link.at_ps, 5'000'000);
  EXPECT_EQ(sim::fault_from_flag("degraded:at=0ps,factor=0.5,link=0-1").factor, 0.5);
  EXPECT_EQ(sim::fault_from_flag("failed_device:device=1,at=10us").device, 1);
}

TEST(FaultInjection, BadFlagsAreOneLineErrorsNamingTheField) {
  EXPECT_EQ(error_of([] { sim::fault_from_flag("straggler:device=x,factor=2,at=1ms"); }),
            "--fault device: \"x\", expected a device id >= 0 like 3");
  EXPECT_EQ(error_of([] { sim::fault_from_flag("straggler:device=1,factor=0.5,at=1ms"); }),
            "--fault factor: \"0.5\", expected a factor >= 1 like 2 (compute takes that many "
            "times as long)");
  EXPECT_EQ(error_of([] { sim::fault_from_flag("degraded:link=0-1,factor=0,at=1ms"); }),
            "--fault factor: \"0\", expected a factor in (0, 1] like 0.5 (of the link's "
            "bandwidth)");
  EXPECT_EQ(error_of([] { sim::fault_from_flag("failed_link:link=01,at=1ms"); }),
            "--fault link: \"01\", expected a link FROM-TO between two node ids like 0-1");
  EXPECT_EQ(error_of([] { sim::fault_from_flag("failed_device:device=1"); }),
            "--fault at: missing, a failed_device fault needs device, at");
  EXPECT_EQ(error_of([] { sim::fault_from_flag("slow:device=1"); }),
            "--fault kind: \"slow\", expected straggler, degraded, failed_link or failed_device");
  EXPECT_EQ(error_of([] { sim::fault_from_flag("failed_device:device=1,at=1ms,color=red"); }),
            "--fault color: unknown field for failed_device, expected device, at");
  EXPECT_NE(error_of([] { sim::fault_from_flag("failed_device:device=1,at=1"); })
                .find("--fault at"),
            std::string::npos);
  for (const char* text : {"straggler", "straggler:device", "straggler:,", ""}) {
    const std::string error = error_of([&] { sim::fault_from_flag(text); });
    EXPECT_EQ(error.rfind("--fault", 0), 0u) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

TEST(FaultInjection, FaultsOutsideTheMachineAreErrors) {
  sim::MachineSpec spec = machine_for("ring-uni", 4);
  spec.faults = {{.kind = sim::FaultKind::failed_device, .device = 4, .at_ps = 0}};
  EXPECT_EQ(error_of([&] { sim::Machine machine(spec); }),
            "faults[0].device: 4, expected a device id below 4");
  spec.faults = {{.kind = sim::FaultKind::failed_link, .link_from = 2, .link_to = 1, .at_ps = 0}};
  EXPECT_NE(error_of([&] { sim::Machine machine(spec); }).find("faults[0].link: \"2-1\""),
            std::string::npos);
  spec.faults = {straggler(1, 2, 0), straggler(1, 3, 5)};
  EXPECT_EQ(error_of([&] { sim::Machine machine(spec); }),
            "faults[1].device: 1, expected one straggler fault per device");
}

TEST(FaultInjection, MachineFilesReadAndWriteFaults) {
  const nlohmann::json file = {
      {"devices", 4},
      {"topology", {{"kind", "ring"}, {"link", {{"bandwidth", "100GB/s"}, {"latency", "1us"}}}}},
      {"faults",
       {{{"kind", "straggler"}, {"device", 3}, {"factor", 2}, {"at", "1ms"}},
        {{"kind", "failed_link"}, {"link", "0-1"}, {"at", "5us"}}}}};
  const sim::MachineSpec spec = sim::machine_from_json(file);
  ASSERT_EQ(spec.faults.size(), 2u);
  EXPECT_EQ(spec.faults[0], straggler(3, 2, 1'000'000'000));
  EXPECT_EQ(spec.faults[1].kind, sim::FaultKind::failed_link);
  EXPECT_EQ(sim::machine_from_json(sim::machine_to_json(spec)).faults, spec.faults);

  nlohmann::json bad = file;
  bad["faults"][0]["factor"] = "fast";
  EXPECT_EQ(error_of([&] { sim::machine_from_json(bad); }),
            "faults[0].factor: \"fast\" is a string, expected a number");
  bad["faults"][0]["factor"] = 0.5;
  EXPECT_EQ(error_of([&] { sim::machine_from_json(bad); }),
            "faults[0].factor: \"0.5\", expected a factor >= 1 like 2 (compute takes "
            "that many times as long)");
  bad = file;
  bad["faults"][0]["device"] = "3";
  EXPECT_EQ(error_of([&] { sim::machine_from_json(bad); }),
            "faults[0].device: \"3\" is a string, expected an integer device id");
  bad = file;
  bad["faults"][1]["kind"] = "flaky";
  EXPECT_NE(error_of([&] { sim::machine_from_json(bad); }).find("faults[1].kind"),
            std::string::npos);
}

// Times count over a Machine's runs joined one after another: a fault after the first run's end
// takes effect in a later run.
TEST(FaultInjection, FaultTimesCountAcrossRunsOfAMachine) {
  sim::MachineSpec spec = machine_for("ring", 2);
  spec.faults = {straggler(0, 2, 1500)};
  sim::Machine machine(spec);
  const Mesh mesh({2}, {"i"});
  const auto step = [](Context& ctx, const Values&) {
    ctx.charge_compute(1000, 0);
    return Values{};
  };
  machine.run(mesh, {{}, {}}, step, false);
  const std::int64_t span_ps = machine.cost_log().compute_ps.at(1);  // about 1000 ps
  EXPECT_EQ(machine.cost_log().compute_ps.at(0), span_ps);
  EXPECT_TRUE(machine.cost_log().faults.empty());
  // The second run starts at span_ps: 1500 - span_ps as before, the rest x 2.
  machine.run(mesh, {{}, {}}, step, false);
  const std::int64_t before_ps = 1500 - span_ps;
  EXPECT_EQ(machine.cost_log().compute_ps,
            (std::vector<std::int64_t>{before_ps + (span_ps - before_ps) * 2, span_ps}));
  ASSERT_EQ(machine.cost_log().faults.size(), 1u);
  EXPECT_EQ(machine.cost_log().faults[0].at_ps, before_ps);  // run-local
}

}  // namespace
}  // namespace spmd
