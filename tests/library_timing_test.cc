// A machine with a fabric times each collective as its library would
// (sim/library_timing.h), while the data still moves by the schedule: the record shows the
// library's algorithm and protocol and its time, and the results keep their bits.
#include "sim/library_timing.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reference/context.h"
#include "sim/machine.h"
#include "sim/machine_presets.h"
#include "support/random_array.h"
#include "tests/error_of.h"
#include "tests/test_machines.h"
#include "workloads/workload.h"

namespace spmd::sim {
namespace {

using test_errors::error_of;

cost_model::Fabric eight_hopper_gpus() {
  return {.generation = cost_model::GpuGeneration::hopper,
          .devices_per_node = 8,
          .scale_up_bytes_per_s = 450'000'000'000,
          .in_switch_reduction = true};
}

MachineSpec machine(bool with_fabric) {
  MachineSpec spec = test_machines::machine_for("switch", 8);
  if (with_fabric) spec.fabric = eight_hopper_gpus();
  return spec;
}

TEST(LibraryTiming, CostOnlyCollectivesTakeTheLibrarysTime) {
  Machine simulated(machine(true), {.cost_only = true});
  Workload workload;
  workload.kind = WorkloadKind::collectives;
  workload.calls = {{"all_reduce", std::int64_t{1} << 30, DType::float32},
                    {"all_gather", std::int64_t{1} << 20, DType::float32}};
  const CostLog log = run_workload(simulated, workload);
  ASSERT_EQ(log.collectives.size(), 2u);
  const cost_model::TimedChoice all_reduce = cost_model::time_collective(
      eight_hopper_gpus(), {.op = cost_model::TimedOp::all_reduce, .bytes = 1 << 30, .ranks = 8});
  EXPECT_EQ(log.collectives[0].algorithm, "nvls/Simple");
  EXPECT_EQ(log.collectives[0].end_ps - log.collectives[0].start_ps, all_reduce.time_ps);
  const cost_model::TimedChoice all_gather = cost_model::time_collective(
      eight_hopper_gpus(), {.op = cost_model::TimedOp::all_gather, .bytes = 1 << 20, .ranks = 8});
  EXPECT_EQ(log.collectives[1].bytes, 1 << 20);
  EXPECT_EQ(log.collectives[1].algorithm, all_gather.label());
  EXPECT_EQ(log.collectives[1].end_ps - log.collectives[1].start_ps, all_gather.time_ps);
}

TEST(LibraryTiming, ARunMayForceTheAlgorithmAndProtocol) {
  Workload workload;
  workload.kind = WorkloadKind::collectives;
  workload.calls = {{"all_reduce", std::int64_t{1} << 30, DType::float32}};
  Machine forced(machine(true), {.cost_only = true,
                                 .library = {cost_model::LibraryAlgorithm::ring,
                                             cost_model::Protocol::ll128}});
  EXPECT_EQ(run_workload(forced, workload).collectives.at(0).algorithm, "ring/LL128");
  // NVLS where the switch cannot reduce: the fastest instead, with the reason as the note.
  MachineSpec without_nvls = machine(true);
  without_nvls.fabric->in_switch_reduction = false;
  Machine fallback(without_nvls,
                   {.cost_only = true, .library = {.algorithm = cost_model::LibraryAlgorithm::nvls}});
  const CollectiveRecord record = run_workload(fallback, workload).collectives.at(0);
  EXPECT_EQ(record.algorithm, "ring/Simple");
  EXPECT_EQ(record.algorithm_note,
            "nvls cannot run all_reduce of 8 ranks on this fabric; ring/Simple is used");
}

TEST(LibraryTiming, AMachineMayForceItsOwnAndARunComesFirst) {
  Workload workload;
  workload.kind = WorkloadKind::collectives;
  workload.calls = {{"all_reduce", std::int64_t{1} << 20, DType::float32}};
  MachineSpec spec = machine(true);
  spec.library = {cost_model::LibraryAlgorithm::tree, cost_model::Protocol::ll128};
  Machine machine_choice(spec, {.cost_only = true});
  EXPECT_EQ(run_workload(machine_choice, workload).collectives.at(0).algorithm, "tree/LL128");
  Machine run_choice(spec, {.cost_only = true,
                            .library = {.algorithm = cost_model::LibraryAlgorithm::ring}});
  EXPECT_EQ(run_workload(run_choice, workload).collectives.at(0).algorithm, "ring/LL128");
  // The machine file's fabric section writes and reads it.
  const MachineSpec read_back = machine_from_json(machine_to_json(spec));
  EXPECT_EQ(read_back.library.algorithm, cost_model::LibraryAlgorithm::tree);
  EXPECT_EQ(read_back.library.protocol, cost_model::Protocol::ll128);
}

TEST(LibraryTiming, OneCallMayForceItsOwn) {
  std::vector<Values> inputs(8, Values{Array(DType::float32, {1 << 20})});
  Machine simulated(machine(true), {.cost_only = true});
  simulated.run(Mesh({8}, {"i"}), inputs,
                [](Context& ctx, const Values& xs) {
                  Array first = ctx.psum(xs[0], "i");
                  ScopedLibraryChoice tree(ctx, {.algorithm = cost_model::LibraryAlgorithm::tree});
                  return Values{first, ctx.psum(xs[0], "i")};
                },
                false);
  const std::vector<CollectiveRecord>& records = simulated.cost_log().collectives;
  ASSERT_EQ(records.size(), 2u);
  EXPECT_NE(records[0].algorithm.substr(0, 4), "tree");
  EXPECT_EQ(records[1].algorithm.substr(0, 4), "tree");
}

TEST(LibraryTiming, AWorkloadCallMayForceItsOwnAndComesBeforeTheRun) {
  const Workload workload = workload_from_json(
      {{"kind", "collectives"},
       {"calls",
        {{{"op", "all_reduce"}, {"bytes", "1GiB"}, {"nccl_algo", "Tree"}, {"nccl_proto", "LL128"}},
         {{"op", "all_reduce"}, {"bytes", "1GiB"}}}}});
  ASSERT_EQ(workload.calls.size(), 2u);
  EXPECT_EQ(workload.calls[0].library.algorithm, cost_model::LibraryAlgorithm::tree);
  EXPECT_EQ(workload.calls[0].library.protocol, cost_model::Protocol::ll128);
  Machine run_forces_ring(machine(true), {.cost_only = true,
                                          .library = {.algorithm = cost_model::LibraryAlgorithm::ring}});
  const CostLog log = run_workload(run_forces_ring, workload);
  ASSERT_EQ(log.collectives.size(), 2u);
  EXPECT_EQ(log.collectives[0].algorithm, "tree/LL128");
  EXPECT_EQ(log.collectives[1].algorithm.substr(0, 4), "ring");
  EXPECT_EQ(error_of([] {
              workload_from_json({{"kind", "collectives"},
                                  {"calls", {{{"op", "all_reduce"}, {"bytes", 8},
                                              {"nccl_algo", "sharp"}}}}});
            }),
            "workload.calls[0].nccl_algo: \"sharp\" is no library algorithm, expected ring, tree, "
            "nvls, nvlstree, pat, collnet or allpairs");
}

TEST(LibraryTiming, AGroupAcrossNodesIsTimedWithItsSpread) {
  const MachineSpec two_nodes = machine_preset_with_devices("hgx-h100", 16);
  EXPECT_EQ(group_ranks_per_node(two_nodes, {0, 8}), 1);
  EXPECT_EQ(group_ranks_per_node(two_nodes, {0, 1, 8, 9}), 2);
  EXPECT_EQ(group_ranks_per_node(two_nodes, {0, 1, 2, 3, 4, 5, 6, 7}), 8);
  // A mesh (data 2, model 8), model inside a node: each 'data' group is one GPU on each node.
  Machine simulated(two_nodes, {.cost_only = true});
  std::vector<Values> inputs(16, Values{Array(DType::float32, {1 << 20})});
  simulated.run(Mesh({2, 8}, {"data", "model"}), inputs,
                [](Context& ctx, const Values& xs) { return Values{ctx.psum(xs[0], "data")}; },
                false);
  const CollectiveRecord& record = simulated.cost_log().collectives.at(0);
  const cost_model::TimedChoice across = cost_model::time_collective(
      *two_nodes.fabric, {.bytes = std::int64_t{4} << 20, .ranks = 2, .ranks_per_node = 1});
  EXPECT_EQ(record.algorithm, across.label());
  EXPECT_EQ(record.end_ps - record.start_ps, across.time_ps);
  const cost_model::TimedChoice as_if_in_one_node = cost_model::time_collective(
      *two_nodes.fabric, {.bytes = std::int64_t{4} << 20, .ranks = 2});
  EXPECT_GT(across.time_ps, as_if_in_one_node.time_ps);
}

TEST(LibraryTiming, ResultsKeepTheScheduleBits) {
  std::vector<Values> inputs;
  for (Array& x : random_per_device(DType::float32, {1000}, 8, 7, {})) {
    inputs.push_back(Values{std::move(x)});
  }
  const auto psum = [](Context& ctx, const Values& xs) { return Values{ctx.psum(xs[0], "i")}; };
  Machine timed(machine(true), {});
  Machine linked(machine(false), {});
  const std::vector<Values> with_fabric = timed.run(Mesh({8}, {"i"}), inputs, psum, false);
  const std::vector<Values> without = linked.run(Mesh({8}, {"i"}), inputs, psum, false);
  ASSERT_EQ(with_fabric.size(), without.size());
  for (std::size_t d = 0; d < without.size(); ++d) {
    EXPECT_TRUE(with_fabric[d][0].bitwise_equal(without[d][0])) << "device " << d;
  }
  EXPECT_NE(timed.cost_log().collectives.at(0).algorithm, linked.cost_log().collectives.at(0).algorithm);
}

}  // namespace
}  // namespace spmd::sim
