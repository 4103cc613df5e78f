// A run of many collectives in bounded memory: the per-device communication figures folded as
// the run goes (sim/overlap_account.h) equal those computed from every interval at the end, and
// a cost log past SimOptions::log_record_limit keeps its first records, counts the rest and
// keeps every total, peak and per-device figure of the unlimited log.

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "sim/intervals.h"
#include "sim/machine.h"
#include "sim/overlap_account.h"
#include "tests/test_machines.h"

namespace spmd {
namespace {

using sim::Interval;

struct Added {
  bool busy = false;
  Interval interval;
};

// Intervals as a device adds them: each starts no earlier than the last settle time, which
// only moves forward. More than the account keeps unfolded, so that it folds several times.
rc::Gen<std::pair<std::vector<Added>, std::vector<std::int64_t>>> device_history() {
  return rc::gen::exec([] {
    const int count = *rc::gen::inRange(300, 1500);
    std::vector<Added> added;
    std::vector<std::int64_t> settled_after;  // the settle time after each interval
    std::int64_t settled_ps = 0;
    for (int i = 0; i < count; ++i) {
      const std::int64_t start_ps = settled_ps + *rc::gen::inRange<std::int64_t>(0, 100);
      const std::int64_t length_ps = *rc::gen::inRange<std::int64_t>(0, 300);
      added.push_back({*rc::gen::arbitrary<bool>(), {start_ps, start_ps + length_ps}});
      settled_ps += *rc::gen::inRange<std::int64_t>(0, 60);
      settled_after.push_back(settled_ps);
    }
    return std::make_pair(added, settled_after);
  });
}

RC_GTEST_PROP(OverlapAccount, FoldingAsTheRunGoesGivesTheFiguresOfAllIntervalsAtTheEnd, ()) {
  const auto [added, settled_after] = *device_history();
  sim::OverlapAccount account;
  std::vector<Interval> busy;
  std::vector<Interval> compute;
  std::int64_t compute_ps = 0;
  for (std::size_t i = 0; i < added.size(); ++i) {
    if (added[i].busy) {
      account.add_busy(added[i].interval);
      busy.push_back(added[i].interval);
    } else {
      account.add_compute(added[i].interval);
      compute.push_back(added[i].interval);
      compute_ps += added[i].interval.second - added[i].interval.first;
    }
    account.settle_before(settled_after[i]);
  }
  const std::vector<Interval> all_busy = sim::merged(busy);
  RC_ASSERT(account.communication_in_flight_ps() == sim::total_length(all_busy));
  RC_ASSERT(account.overlapped_communication_ps() ==
            sim::overlap_length(all_busy, sim::merged(compute)));
  RC_ASSERT(account.compute_ps() == compute_ps);
}

// Per device: blocking psums, compute that overlaps started ones, and memory held and released.
sim::CostLog run_with_limit(std::size_t log_record_limit) {
  constexpr int kDevices = 4;
  sim::Machine machine(test_machines::machine_for("ring", kDevices),
                       {.cost_only = true, .log_record_limit = log_record_limit});
  const Mesh mesh({kDevices}, {"i"});
  const std::vector<Values> inputs(kDevices);
  machine.run(mesh, inputs,
              [](Context& ctx, const Values&) {
                for (int step = 0; step < 400; ++step) {
                  ctx.hold_memory(1000 + step, "activations");
                  PendingCollective started = ctx.collective_cost_start(
                      CollectiveCall{.op = CollectiveOp::psum, .axes = AxisNames("i")},
                      DType::float32, {256 + step});
                  ctx.charge_compute(1000.0 * (1 + ctx.device()), 0);
                  started.wait();
                  ctx.release_memory(1000 + step);
                  ctx.collective_cost(CollectiveCall{.op = CollectiveOp::psum, .axes = AxisNames("i")},
                                      DType::float32, {64});
                }
                return Values{};
              },
              false);
  return machine.cost_log();
}

TEST(CostLogLimits, PastTheLimitTheLogCountsAndKeepsEveryTotal) {
  const sim::CostLog full = run_with_limit(100'000);
  const sim::CostLog limited = run_with_limit(50);
  EXPECT_EQ(full.collective_count, 800u);
  EXPECT_EQ(full.collectives.size(), 800u);
  EXPECT_FALSE(full.compute_spans_truncated);
  EXPECT_EQ(limited.collective_count, 800u);
  ASSERT_EQ(limited.collectives.size(), 50u);
  EXPECT_EQ(limited.collectives.back().end_ps, full.collectives[49].end_ps);
  EXPECT_EQ(limited.compute_spans.size(), 50u);
  EXPECT_TRUE(limited.compute_spans_truncated);
  std::int64_t collective_time_ps = 0;
  for (const sim::CollectiveRecord& record : full.collectives) {
    collective_time_ps += record.end_ps - record.start_ps;
  }
  EXPECT_EQ(full.collective_time_ps, collective_time_ps);
  EXPECT_EQ(limited.collective_time_ps, collective_time_ps);
  EXPECT_EQ(limited.end_ps, full.end_ps);
  EXPECT_EQ(limited.compute_ps, full.compute_ps);
  EXPECT_EQ(limited.exposed_communication_ps, full.exposed_communication_ps);
  EXPECT_EQ(limited.communication_in_flight_ps, full.communication_in_flight_ps);
  EXPECT_EQ(limited.overlapped_communication_ps, full.overlapped_communication_ps);
  EXPECT_GT(full.overlapped_communication_ps.at(0), 0);
  ASSERT_EQ(limited.memory.size(), full.memory.size());
  for (std::size_t d = 0; d < full.memory.size(); ++d) {
    EXPECT_EQ(limited.memory[d].peak_bytes, full.memory[d].peak_bytes);
    EXPECT_FALSE(full.memory[d].timeline_truncated);
    EXPECT_TRUE(limited.memory[d].timeline_truncated);
    EXPECT_EQ(limited.memory[d].timeline.size(), 50u);
  }
}

}  // namespace
}  // namespace spmd
