// The built-in training workloads with and without overlapped gradient reductions
// (docs/workload-format.md, "overlap"), and the reports' step, exposed and overlapped figures.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/machine.h"
#include "sim/machine_presets.h"
#include "tests/error_of.h"
#include "traces/run_report.h"
#include "workloads/workload.h"

namespace spmd {
namespace {

using test_errors::error_of;

struct Compared {
  traces::RunTotals overlapped;
  traces::RunTotals blocking;
  sim::CostLog overlapped_log;
};

Compared run_both(const nlohmann::json& description) {
  Workload workload = workload_from_json(description);
  EXPECT_TRUE(workload.overlap);
  sim::Machine machine(machine_from_name_or_file("dgx-h100"), {.cost_only = true});
  Compared out;
  out.overlapped_log = run_workload(machine, workload);
  out.overlapped = traces::run_totals(out.overlapped_log);
  workload.overlap = false;
  out.blocking = traces::run_totals(run_workload(machine, workload));
  return out;
}

void expect_overlap_helps(const Compared& c, int steps) {
  EXPECT_EQ(c.overlapped.steps, steps);
  EXPECT_EQ(c.blocking.steps, steps);
  EXPECT_LT(c.overlapped.step_ps, c.blocking.step_ps);
  EXPECT_LT(c.overlapped.exposed_communication_ps, c.blocking.exposed_communication_ps);
  EXPECT_GT(c.overlapped.overlapped_communication_ps, 0);
  EXPECT_EQ(c.blocking.overlapped_communication_ps, 0);
  EXPECT_LE(c.overlapped.overlapped_communication_ps, c.overlapped.communication_in_flight_ps);
  ASSERT_EQ(c.overlapped_log.steps.size(), static_cast<std::size_t>(steps));
  std::int64_t exposed = 0;
  for (const traces::StepTotals& step : traces::step_totals(c.overlapped_log)) {
    exposed += step.exposed_communication_ps;
  }
  EXPECT_EQ(exposed, c.overlapped.exposed_communication_ps);
}

TEST(WorkloadOverlap, MlpGradientReductionsOverlapTheBackwardPass) {
  expect_overlap_helps(run_both({{"kind", "mlp_data_parallel"},
                                 {"layers", {4096, 16384, 16384, 4096}},
                                 {"batch_per_device", 64},
                                 {"steps", 2}}),
                       2);
}

TEST(WorkloadOverlap, TransformerDataGradientsOverlapTheBackwardPass) {
  expect_overlap_helps(run_both({{"kind", "transformer_layer"},
                                 {"model_parallel", 2},
                                 {"batch_per_device", 1},
                                 {"sequence", 512},
                                 {"d_model", 4096},
                                 {"d_ff", 16384},
                                 {"dtype", "bfloat16"}}),
                       1);
}

TEST(WorkloadOverlap, OverlapIsABoolean) {
  EXPECT_FALSE(workload_from_json({{"kind", "mlp_data_parallel"},
                                   {"layers", {4, 4}},
                                   {"batch_per_device", 2},
                                   {"overlap", false}})
                   .overlap);
  EXPECT_EQ(error_of([] {
              workload_from_json({{"kind", "mlp_data_parallel"},
                                  {"layers", {4, 4}},
                                  {"batch_per_device", 2},
                                  {"overlap", 1}});
            }).rfind("workload.overlap: ", 0),
            0u);
  EXPECT_NE(error_of([] {
              workload_from_json({{"kind", "collectives"},
                                  {"calls", {{{"op", "all_reduce"}, {"bytes", 64}}}},
                                  {"overlap", true}});
            }).find("workload.overlap: unknown field"),
            std::string::npos);
}

TEST(WorkloadOverlap, ReportJsonHasStepsAndOverlapFigures) {
  const Compared c = run_both({{"kind", "mlp_data_parallel"},
                               {"layers", {1024, 1024}},
                               {"batch_per_device", 8},
                               {"steps", 3}});
  const nlohmann::json report = traces::run_report_json(c.overlapped_log, "dgx-h100");
  EXPECT_EQ(report["totals"]["steps"], 3);
  EXPECT_EQ(report["totals"]["step_ps"].get<std::int64_t>(),
            report["totals"]["total_ps"].get<std::int64_t>() / 3);
  EXPECT_TRUE(report["totals"].contains("exposed_communication_ps"));
  EXPECT_TRUE(report["totals"].contains("overlapped_communication_ps"));
  ASSERT_EQ(report["steps"].size(), 3u);
  EXPECT_EQ(report["steps"][1]["start_ps"].get<std::int64_t>(),
            report["steps"][0]["time_ps"].get<std::int64_t>());
  EXPECT_TRUE(report["devices"][0].contains("exposed_communication_ps"));
  for (const auto& collective : report["collectives"]) {
    EXPECT_LE(collective["issue_ps"].get<std::int64_t>(),
              collective["start_ps"].get<std::int64_t>());
  }
}

}  // namespace
}  // namespace spmd
