// Link sharing (docs/link-sharing.md): max-min fair bandwidth sharing and fifo queues, on the
// links alone (sim::LinkState with an event clock) and through whole simulated runs. Examples
// with hand-computed times, and properties: the solver's rates are max-min fair, a transfer alone
// takes the closed form under both models, a single link is work conserving, runs repeat exactly.

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>

#include "cost_model/fair_share.h"
#include "cost_model/link_time.h"
#include "sim/link_state.h"
#include "sim/machine.h"
#include "tests/error_of.h"
#include "tests/generators.h"
#include "topology/topology.h"

namespace spmd {
namespace {

using sim::LinkSharing;
using test_errors::error_of;

constexpr std::int64_t kLatency = 1'000'000;           // 1 us
constexpr std::int64_t kBandwidth = 1'000'000'000;     // 1 GB/s: 1000 bytes take 1 us
constexpr std::int64_t kSerialization = 1'000'000;     // of 1000 bytes

// ---- The links alone: steps of transfers sent at chosen times

struct Send {
  int from = 0;
  int to = 0;
  std::int64_t bytes = 0;
};

struct TimedStep {
  std::int64_t start_ps = 0;
  std::vector<Send> sends;
};

struct Arrival {
  int from, to;
  std::int64_t bytes, start_ps, arrival_ps;
};

struct StepOutcome {
  std::int64_t end_ps = -1;
  std::vector<Arrival> arrivals;  // in the order the links reported them
};

// Hears one step; a step's transfers are its sends, ranks equal to device ids.
class StepRecorder final : public sim::StepListener,
                           public std::enable_shared_from_this<StepRecorder> {
 public:
  StepOutcome outcome;
  void transfer_arrived(int from, int to, std::int64_t bytes, std::int64_t start_ps,
                        std::int64_t arrival_ps) override {
    outcome.arrivals.push_back({from, to, bytes, start_ps, arrival_ps});
  }
  void step_ended(std::int64_t end_ps) override { outcome.end_ps = end_ps; }
  std::shared_ptr<sim::StepListener> keep_alive() override { return shared_from_this(); }
};

// Sends each step at its start time over `topology`; returns what each step heard.
std::vector<StepOutcome> run_steps(const topology::Topology& topology, LinkSharing sharing,
                                   const std::vector<TimedStep>& steps) {
  sim::EventQueue events;
  sim::LinkState links(topology, events, sharing);
  std::vector<int> devices(static_cast<std::size_t>(topology.device_count()));
  std::iota(devices.begin(), devices.end(), 0);
  std::vector<std::vector<collectives::Transfer>> transfers(steps.size());
  std::vector<std::shared_ptr<StepRecorder>> recorders;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    for (const Send& send : steps[s].sends) {
      transfers[s].push_back({.source = send.from, .destination = send.to, .end = send.bytes});
    }
    recorders.push_back(std::make_shared<StepRecorder>());
    events.schedule(steps[s].start_ps, [&, s] {
      const sim::StepTransfers step{transfers[s], devices, 1, true};
      if (auto end = links.send_step(step, *recorders[s])) recorders[s]->step_ended(*end);
    });
  }
  while (!events.empty()) events.run_next();
  std::vector<StepOutcome> outcomes;
  for (const auto& recorder : recorders) outcomes.push_back(recorder->outcome);
  return outcomes;
}

std::vector<std::int64_t> arrival_times(const StepOutcome& outcome) {
  std::vector<std::int64_t> times;
  for (const Arrival& a : outcome.arrivals) times.push_back(a.arrival_ps);
  std::sort(times.begin(), times.end());
  return times;
}

std::unique_ptr<topology::Topology> one_way_ring(int devices) {
  return topology::make_ring(devices, {kBandwidth, kLatency}, /*bidirectional=*/false);
}

TEST(SimLinkSharing, TwoEqualFlowsOnOneLinkFinishTogetherUnderFair) {
  const auto ring = one_way_ring(2);
  const std::vector<TimedStep> step = {{0, {{0, 1, 1000}, {0, 1, 1000}}}};
  const StepOutcome fair = run_steps(*ring, LinkSharing::fair, step)[0];
  EXPECT_EQ(arrival_times(fair), (std::vector<std::int64_t>{kLatency + 2 * kSerialization,
                                                            kLatency + 2 * kSerialization}));
  EXPECT_EQ(fair.end_ps, kLatency + 2 * kSerialization);
  const StepOutcome fifo = run_steps(*ring, LinkSharing::fifo, step)[0];
  EXPECT_EQ(arrival_times(fifo), (std::vector<std::int64_t>{kLatency + kSerialization,
                                                            kLatency + 2 * kSerialization}));
  EXPECT_EQ(fifo.end_ps, kLatency + 2 * kSerialization);
}

TEST(SimLinkSharing, AFlowJoiningLateSharesWhatIsLeft) {
  // A starts alone; B joins halfway through A. Fair: they share from then on, A's last half
  // takes a whole serialization, then B has the link alone. Fifo: B waits for A.
  const auto ring = one_way_ring(2);
  const std::vector<TimedStep> steps = {{0, {{0, 1, 1000}}},
                                        {kSerialization / 2, {{0, 1, 1000}}}};
  const std::vector<StepOutcome> fair = run_steps(*ring, LinkSharing::fair, steps);
  EXPECT_EQ(fair[0].end_ps, kLatency + 3 * kSerialization / 2);
  EXPECT_EQ(fair[1].end_ps, kLatency + 2 * kSerialization);
  const std::vector<StepOutcome> fifo = run_steps(*ring, LinkSharing::fifo, steps);
  EXPECT_EQ(fifo[0].end_ps, kLatency + kSerialization);
  EXPECT_EQ(fifo[1].end_ps, kLatency + 2 * kSerialization);
}

TEST(SimLinkSharing, AFlowBottleneckedElsewhereLeavesItsShareToTheOthers) {
  // One-way ring 0 -> 1 -> 2 -> 3 -> 0 (link i leaves device i). Link 0 carries a (0 -> 2) and
  // c, d (0 -> 1): a third each. Link 1 carries a and b (1 -> 2): b takes the two thirds a
  // leaves. 1200 bytes each, at 1.2 GB/s a message alone takes 1 us.
  const auto ring = topology::make_ring(4, {1'200'000'000, kLatency}, false);
  const std::vector<TimedStep> step = {
      {0, {{0, 2, 1200}, {1, 2, 1200}, {0, 1, 1200}, {0, 1, 1200}}}};
  const StepOutcome fair = run_steps(*ring, LinkSharing::fair, step)[0];
  ASSERT_EQ(fair.arrivals.size(), 4u);
  const auto arrival_of = [&](int from, int to) {
    for (const Arrival& a : fair.arrivals) {
      if (a.from == from && a.to == to) return a.arrival_ps;
    }
    return std::int64_t{-1};
  };
  EXPECT_EQ(arrival_of(1, 2), kLatency + 3 * kSerialization / 2);  // at 2/3 of the link
  EXPECT_EQ(arrival_of(0, 1), kLatency + 3 * kSerialization);      // at 1/3
  EXPECT_EQ(arrival_of(0, 2), 2 * kLatency + 3 * kSerialization);  // at 1/3, two hops
  EXPECT_EQ(fair.end_ps, 2 * kLatency + 3 * kSerialization);
}

TEST(SimLinkSharing, AStepThatCrossesNoLinkEndsAtOnce) {
  const auto ring = one_way_ring(2);
  for (LinkSharing sharing : {LinkSharing::fair, LinkSharing::fifo}) {
    const std::vector<StepOutcome> outcomes =
        run_steps(*ring, sharing, {{5, {{0, 0, 1000}, {1, 1, 1000}}}, {7, {}}});
    EXPECT_EQ(outcomes[0].end_ps, 5);
    EXPECT_EQ(outcomes[1].end_ps, 7);
    EXPECT_TRUE(outcomes[0].arrivals.empty());
  }
}

TEST(SimLinkSharing, AnEmptyMessageTakesTheLatency) {
  const auto ring = one_way_ring(2);
  for (LinkSharing sharing : {LinkSharing::fair, LinkSharing::fifo}) {
    EXPECT_EQ(run_steps(*ring, sharing, {{3, {{0, 1, 0}}}})[0].end_ps, 3 + kLatency);
  }
}

// ---- The solver alone

// Flows over `links` (bandwidths in bytes/s), each a list of distinct links.
std::vector<WideInt> solve(const std::vector<std::int64_t>& links,
                           const std::vector<std::vector<int>>& flows) {
  cost_model::MaxMinFairShare solver(links);
  std::vector<std::span<const int>> routes(flows.begin(), flows.end());
  std::vector<WideInt> rates(flows.size(), -1);
  solver.solve(routes, rates);
  return rates;
}

WideInt rate(std::int64_t bytes_per_s) { return cost_model::share_rate(bytes_per_s); }

TEST(SimLinkSharing, ProgressiveFillingGivesTheTextbookRates) {
  // Bertsekas & Gallager's example shape: links of 1, 1, 2; flows 0:{0}, 1:{0,1}, 2:{1,2},
  // 3:{2}. Link 0 fixes flows 0 and 1 at 1/2; link 1 then leaves 1/2 to flow 2; link 2 leaves
  // 2 - 1/2 = 3/2 to flow 3.
  const std::vector<WideInt> rates = solve({1000, 1000, 2000}, {{0}, {0, 1}, {1, 2}, {2}});
  EXPECT_EQ(rates, (std::vector<WideInt>{rate(500), rate(500), rate(500), rate(1500)}));
}

TEST(SimLinkSharing, SharesBelowTheScaleRoundDownAndNeverOverfillALink) {
  // 17 flows on a 1 byte/s link: 720720 / 17 is not whole.
  const std::vector<WideInt> rates = solve({1}, std::vector<std::vector<int>>(17, {0}));
  for (WideInt r : rates) EXPECT_EQ(r, WideInt{cost_model::kShareScale / 17});
  EXPECT_LE(std::accumulate(rates.begin(), rates.end(), WideInt{0}), rate(1));
}

// A random instance: up to 6 links of random bandwidths, up to 12 flows over random sets of them.
struct Instance {
  std::vector<std::int64_t> links;
  std::vector<std::vector<int>> flows;
};

rc::Gen<Instance> instance() {
  return rc::gen::exec([] {
    Instance instance;
    const int link_count = *rc::gen::inRange(1, 7);
    for (int l = 0; l < link_count; ++l) {
      instance.links.push_back(*rc::gen::oneOf(rc::gen::inRange<std::int64_t>(1, 100),
                                               rc::gen::inRange<std::int64_t>(1, 1'000'000'000'000)));
    }
    const int flow_count = *rc::gen::inRange(1, 13);
    for (int f = 0; f < flow_count; ++f) {
      std::vector<int> route;
      for (int l = 0; l < link_count; ++l) {
        if (*rc::gen::arbitrary<bool>()) route.push_back(l);
      }
      if (route.empty()) route.push_back(*rc::gen::inRange(0, link_count));
      instance.flows.push_back(route);
    }
    return instance;
  });
}

RC_GTEST_PROP(SimLinkSharing, the_solvers_rates_are_max_min_fair, ()) {
  const Instance in = *instance();
  const std::vector<WideInt> rates = solve(in.links, in.flows);
  std::vector<WideInt> load(in.links.size(), 0);
  std::vector<int> count(in.links.size(), 0);
  std::vector<WideInt> top(in.links.size(), 0);
  for (std::size_t f = 0; f < in.flows.size(); ++f) {
    RC_ASSERT(rates[f] >= 0);
    for (int l : in.flows[f]) {
      load[static_cast<std::size_t>(l)] += rates[f];
      ++count[static_cast<std::size_t>(l)];
      top[static_cast<std::size_t>(l)] = std::max(top[static_cast<std::size_t>(l)], rates[f]);
    }
  }
  // Feasible: no link carries more than its bandwidth.
  for (std::size_t l = 0; l < in.links.size(); ++l) RC_ASSERT(load[l] <= rate(in.links[l]));
  // Fair: every flow has a bottleneck, a link it crosses that is full (up to the rounding of
  // less than one share unit per flow) and on which no flow gets more.
  for (std::size_t f = 0; f < in.flows.size(); ++f) {
    bool bottlenecked = false;
    for (int link : in.flows[f]) {
      const auto l = static_cast<std::size_t>(link);
      bottlenecked |= rate(in.links[l]) - load[l] < count[l] && rates[f] == top[l];
    }
    RC_ASSERT(bottlenecked);
  }
}

RC_GTEST_PROP(SimLinkSharing, the_solvers_rates_do_not_depend_on_the_flows_order, ()) {
  const Instance in = *instance();
  // A random permutation: indices sorted by random keys (ties by index).
  const auto keys = *rc::gen::container<std::vector<int>>(in.flows.size(), rc::gen::arbitrary<int>());
  std::vector<std::size_t> order(in.flows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  std::vector<std::vector<int>> shuffled;
  for (std::size_t i : order) shuffled.push_back(in.flows[i]);
  const std::vector<WideInt> rates = solve(in.links, in.flows);
  const std::vector<WideInt> shuffled_rates = solve(in.links, shuffled);
  for (std::size_t k = 0; k < order.size(); ++k) RC_ASSERT(shuffled_rates[k] == rates[order[k]]);
}

// ---- Uncontended: the closed form, under both models

std::unique_ptr<topology::Topology> topology_of(int kind, int devices, topology::LinkSpec link) {
  switch (kind) {
    case 0: return topology::make_ring(devices, link, false);
    case 1: return topology::make_ring(devices, link, true);
    case 2: return topology::make_fully_connected(devices, link);
    case 3: return topology::make_switch(devices, link);
    default:
      return topology::make_hierarchical(2, devices, link,
                                         {link.bandwidth_bytes_per_s / 3 + 1, link.latency_ps * 2});
  }
}

RC_GTEST_PROP(SimLinkSharing, a_transfer_alone_takes_latency_plus_serialization_under_both, ()) {
  const topology::LinkSpec link{*rc::gen::inRange<std::int64_t>(1, 1'000'000'000'000),
                                *rc::gen::inRange<std::int64_t>(0, 10'000'000)};
  const int kind = *rc::gen::inRange(0, 5);
  const auto topology = topology_of(kind, *rc::gen::inRange(2, 9), link);
  const int devices = topology->device_count();
  const int from = *rc::gen::inRange(0, devices);
  const int to = (from + *rc::gen::inRange(1, devices)) % devices;
  const std::int64_t bytes = *rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 40);
  const std::int64_t start = *rc::gen::inRange<std::int64_t>(0, 1'000'000);
  std::int64_t latency = 0;
  std::int64_t bandwidth = 0;
  for (int l : topology->route(from, to)) {
    const topology::LinkSpec& spec = topology->links()[static_cast<std::size_t>(l)].spec;
    latency += spec.latency_ps;
    bandwidth = bandwidth == 0 ? spec.bandwidth_bytes_per_s
                               : std::min(bandwidth, spec.bandwidth_bytes_per_s);
  }
  const std::int64_t expected = start + cost_model::transfer_time_ps(bytes, latency, bandwidth);
  for (LinkSharing sharing : {LinkSharing::fair, LinkSharing::fifo}) {
    RC_ASSERT(run_steps(*topology, sharing, {{start, {{from, to, bytes}}}})[0].end_ps == expected);
  }
}

// ---- Work conservation on one link

// Flows on the one link 0 -> 1, each starting at its own time: the link is busy whenever a flow
// is in flight, under either model, so the last byte leaves at the same time under both, up to
// the rounding to whole picoseconds (fair: < 1 ps per completion; fifo: per message).
RC_GTEST_PROP(SimLinkSharing, a_shared_link_carries_its_full_bandwidth_under_both, ()) {
  const std::int64_t bandwidth = *rc::gen::inRange<std::int64_t>(1, 1'000'000'000'000);
  const auto ring = topology::make_ring(2, {bandwidth, 0}, false);
  const int flows = *rc::gen::inRange(1, 20);
  std::vector<TimedStep> steps;
  std::int64_t total_bytes = 0;
  for (int f = 0; f < flows; ++f) {
    const std::int64_t bytes = *rc::gen::inRange<std::int64_t>(0, 1'000'000);
    total_bytes += bytes;
    steps.push_back({*rc::gen::inRange<std::int64_t>(0, 1'000'000'000), {{0, 1, bytes}}});
  }
  const auto last_end = [&](LinkSharing sharing) {
    std::int64_t end = 0;
    std::size_t arrivals = 0;
    for (const StepOutcome& outcome : run_steps(*ring, sharing, steps)) {
      end = std::max(end, outcome.end_ps);
      arrivals += outcome.arrivals.size();
      for (const Arrival& a : outcome.arrivals) RC_ASSERT(a.arrival_ps <= outcome.end_ps);
    }
    RC_ASSERT(arrivals == steps.size());  // every flow arrives, once
    return end;
  };
  const std::int64_t fair = last_end(LinkSharing::fair);
  const std::int64_t fifo = last_end(LinkSharing::fifo);
  RC_ASSERT(std::abs(fair - fifo) <= flows);
  // With every flow starting together the link is busy from 0 to the end.
  if (std::all_of(steps.begin(), steps.end(), [](const TimedStep& s) { return s.start_ps == 0; })) {
    RC_ASSERT(fair >= cost_model::serialization_ps(total_bytes, bandwidth));
  }
}

TEST(SimLinkSharing, EqualFlowsStartingTogetherOnOneLinkEndAtTheirTotalsSerialization) {
  // Up to 16 flows share a link exactly (cost_model/fair_share.h), so they all end together.
  const auto ring = topology::make_ring(2, {3, 0}, false);  // 3 bytes/s: shares are fractions
  for (int flows = 1; flows <= 16; ++flows) {
    std::vector<Send> sends(static_cast<std::size_t>(flows), Send{0, 1, 7});
    const StepOutcome outcome = run_steps(*ring, LinkSharing::fair, {{0, sends}})[0];
    const std::vector<std::int64_t> times = arrival_times(outcome);
    EXPECT_EQ(times.front(), times.back()) << flows << " flows";
    EXPECT_EQ(outcome.end_ps, cost_model::serialization_ps(7 * flows, 3)) << flows << " flows";
  }
}

// ---- Whole runs

// Every device sends two hops ahead on a one-way ring of 4 (sim_test's example): every link
// carries two messages.
std::pair<std::int64_t, sim::CostLog> two_hop_permute(LinkSharing sharing) {
  sim::MachineSpec spec;
  spec.devices = 4;
  spec.topology = topology::topology_from_text("ring-uni", 4, {.link = {kBandwidth, kLatency}});
  spec.link_sharing = sharing;
  sim::Machine machine(spec, {.record_link_transfers = 100});
  std::vector<Values> inputs(4, Values{Array(DType::float32, {250})});  // 1000 bytes
  machine.run(
      Mesh({4}, {"i"}), inputs,
      [](Context& ctx, const Values& xs) {
        return Values{ctx.ppermute(xs[0], AxisNames("i"), {{0, 2}, {1, 3}, {2, 0}, {3, 1}})};
      },
      false);
  const sim::CollectiveRecord& record = machine.cost_log().collectives.at(0);
  return {record.end_ps - record.start_ps, machine.cost_log()};
}

TEST(SimLinkSharing, APermuteWhoseMessagesShareLinksTakesTwoSerializationsUnderFair) {
  const auto [fair_ps, fair_log] = two_hop_permute(LinkSharing::fair);
  EXPECT_EQ(fair_ps, 2 * kSerialization + 2 * kLatency);
  EXPECT_EQ(fair_log.link_transfers, 4u);
  ASSERT_EQ(fair_log.transfers.size(), 4u);
  for (const sim::LinkTransferRecord& t : fair_log.transfers) {
    EXPECT_EQ(t.end_ps - t.start_ps, 2 * kSerialization + 2 * kLatency);
  }
  // fifo: the second message on each link waits (sim_test's TransfersSharingALinkWait...).
  EXPECT_EQ(two_hop_permute(LinkSharing::fifo).first, 4 * kSerialization + 2 * kLatency);
}

std::string describe(const sim::CostLog& log) {
  std::string s;
  for (const auto& r : log.collectives) {
    s += r.call + " " + r.algorithm + " " + std::to_string(r.start_ps) + "-" +
         std::to_string(r.end_ps) + "\n";
  }
  for (const auto& t : log.transfers) {
    s += std::to_string(t.from_device) + ">" + std::to_string(t.to_device) + " " + std::to_string(t.bytes) +
         " " + std::to_string(t.start_ps) + "-" + std::to_string(t.end_ps) + "\n";
  }
  return s + "transfers " + std::to_string(log.link_transfers);
}

RC_GTEST_PROP(SimLinkSharing, contended_runs_repeat_exactly, ()) {
  const Mesh mesh = *testkit::mesh(2, 2, 16);
  const std::vector<std::string> names = mesh.axis_names();
  const std::string topology = *rc::gen::element<std::string>("ring", "ring-uni", "switch", "mesh");
  const collectives::Algorithm algorithm = *rc::gen::element(
      collectives::Algorithm::direct, collectives::Algorithm::ring,
      collectives::Algorithm::double_binary_tree);
  const LinkSharing sharing = *rc::gen::element(LinkSharing::fair, LinkSharing::fifo);
  const auto run = [&] {
    sim::MachineSpec spec;
    spec.devices = mesh.device_count();
    spec.topology = topology::topology_from_text(topology, spec.devices, {});
    spec.link_sharing = sharing;
    sim::Machine machine(spec, {.cost_only = true,
                                .algorithm = algorithm,
                                .record_link_transfers = 100'000});
    std::vector<Values> inputs(static_cast<std::size_t>(mesh.device_count()));
    machine.run(
        mesh, inputs,
        [&](Context& ctx, const Values&) {
          ctx.charge_compute(1e6 * (ctx.device() % 3), 4096);
          CollectiveCall call;
          call.op = CollectiveOp::psum;
          call.axes = AxisNames(names[0]);  // several groups at once: they contend
          ctx.collective_cost(call, DType::float32, {4096});
          call.op = CollectiveOp::all_gather;
          call.axes = AxisNames(names);
          call.tiled = true;
          ctx.collective_cost(call, DType::float32, {1000});
          return Values{};
        },
        false);
    return describe(machine.cost_log());
  };
  RC_ASSERT(run() == run());
}

// ---- Names

TEST(SimLinkSharing, NamesRoundTripAndBadNamesAreOneLineErrors) {
  EXPECT_EQ(sim::link_sharing_from_name("fair"), LinkSharing::fair);
  EXPECT_EQ(sim::link_sharing_from_name("fifo"), LinkSharing::fifo);
  EXPECT_EQ(sim::link_sharing_name(LinkSharing::fifo), "fifo");
  EXPECT_EQ(error_of([] { sim::link_sharing_from_name("maxmin"); }),
            "link sharing 'maxmin' is unknown, expected fair or fifo");
}

}  // namespace
}  // namespace spmd
