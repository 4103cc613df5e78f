// The symmetric step (workloads/symmetric_step.h): a transformer step run by one device per
// pipeline stage must be the full run, to the picosecond: the same step time, the same
// collective records, the same memory, and every device's figures those of its stage's
// representative. Where symmetry breaks it runs in full and says why.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <string>
#include <vector>
#include <tuple>

#include "sim/faults.h"
#include "sim/machine.h"
#include "sim/machine_presets.h"
#include "topology/topology_spec.h"
#include "traces/run_report.h"
#include "workloads/symmetric_step.h"

namespace spmd {
namespace {

// A small model whose every width divides by the largest degrees the generator picks.
TransformerSpec small_model() {
  TransformerSpec spec;
  spec.d_model = 256;
  spec.heads = 8;
  spec.kv_heads = 8;
  spec.d_ff = 512;
  spec.vocabulary = 1024;
  spec.sequence = 128;
  return spec;
}

Workload workload_of(const TransformerSpec& spec, int steps) {
  Workload w;
  w.kind = WorkloadKind::transformer;
  w.name = "symmetric";
  w.dtype = spec.dtype;
  w.steps = steps;
  w.transformer = spec;
  return w;
}

rc::Gen<TransformerSpec> layouts() {
  return rc::gen::exec([] {
    TransformerSpec spec = small_model();
    spec.pipeline = *rc::gen::element(1, 2, 4);
    spec.tensor = *rc::gen::element(1, 2, 4, 8);
    spec.context = *rc::gen::element(1, 2);
    spec.fsdp = *rc::gen::element(1, 2);
    spec.data = *rc::gen::element(1, 2, 4);
    spec.layers = spec.pipeline * *rc::gen::inRange(1, 3);
    spec.micro_batch_size = *rc::gen::element(1, 2);
    spec.global_batch = std::int64_t{spec.data} * spec.fsdp * spec.micro_batch_size *
                        *rc::gen::inRange(1, 6);
    spec.sequence_parallel = *rc::gen::arbitrary<bool>();
    spec.distributed_optimizer = *rc::gen::arbitrary<bool>();
    spec.overlap = *rc::gen::arbitrary<bool>();
    spec.optimizer = *rc::gen::element(Optimizer::adam, Optimizer::sgd);
    spec.recompute = *rc::gen::element(Recompute::none, Recompute::selective, Recompute::full);
    return spec;
  });
}

auto record_fields(const sim::CollectiveRecord& r) {
  return std::tie(r.index, r.op, r.call, r.axes, r.dtype, r.shape, r.bytes, r.algorithm,
                  r.algorithm_note, r.groups, r.group_size, r.with_data, r.issue_ps, r.start_ps,
                  r.end_ps, r.algbw_bytes_per_s, r.busbw_bytes_per_s);
}

void expect_same_run(const TransformerSpec& spec, const WorkloadRun& full,
                     const WorkloadRun& reduced) {
  const sim::CostLog& f = full.log;
  const sim::CostLog& r = reduced.log;
  RC_ASSERT(reduced.note.rfind("symmetric step", 0) == 0u);
  RC_ASSERT(full.representatives.empty());
  RC_ASSERT(static_cast<int>(reduced.representatives.size()) == spec.pipeline);
  const traces::RunTotals ft = traces::run_totals(f), rt = traces::run_totals(r);
  RC_ASSERT(ft.total_ps == rt.total_ps);
  RC_ASSERT(ft.step_ps == rt.step_ps);
  RC_ASSERT(ft.compute_ps == rt.compute_ps);
  RC_ASSERT(ft.communication_ps == rt.communication_ps);
  RC_ASSERT(ft.collective_ps == rt.collective_ps);
  RC_ASSERT(ft.peak_memory_bytes == rt.peak_memory_bytes);
  RC_ASSERT(ft.exposed_communication_ps == rt.exposed_communication_ps);
  RC_ASSERT(ft.communication_in_flight_ps == rt.communication_in_flight_ps);
  RC_ASSERT(ft.overlapped_communication_ps == rt.overlapped_communication_ps);
  // Ties go to the lowest device, and a stage's representative is its lowest.
  RC_ASSERT(ft.critical_device ==
            reduced.representatives[static_cast<std::size_t>(rt.critical_device)]);
  RC_ASSERT(ft.peak_memory_device ==
            reduced.representatives[static_cast<std::size_t>(rt.peak_memory_device)]);
  RC_ASSERT(f.collective_count == r.collective_count);
  RC_ASSERT(f.collective_time_ps == r.collective_time_ps);
  // The same records; the log lists them as they start, and collectives that start in the same
  // picosecond may be listed in another order (docs/simulator.md, "The symmetric step").
  RC_ASSERT(f.collectives.size() == r.collectives.size());
  const auto by_start = [](const sim::CollectiveRecord& a, const sim::CollectiveRecord& b) {
    return std::tie(a.start_ps, a.index) < std::tie(b.start_ps, b.index);
  };
  std::vector<sim::CollectiveRecord> fc = f.collectives, rc = r.collectives;
  RC_ASSERT(std::is_sorted(fc.begin(), fc.end(), [](const auto& a, const auto& b) {
    return a.start_ps < b.start_ps;
  }));
  std::sort(fc.begin(), fc.end(), by_start);
  std::sort(rc.begin(), rc.end(), by_start);
  for (std::size_t i = 0; i < fc.size(); ++i) {
    RC_ASSERT(record_fields(fc[i]) == record_fields(rc[i]));
  }
  RC_ASSERT(f.placement == r.placement);
  RC_ASSERT(f.steps.size() == r.steps.size());
  for (int d = 0; d < static_cast<int>(spec.devices()); ++d) {
    const auto full_d = static_cast<std::size_t>(d);
    const auto rep = static_cast<std::size_t>(representative_index(spec, d));
    RC_ASSERT(f.memory[full_d].peak_bytes == r.memory[rep].peak_bytes);
    RC_ASSERT(f.memory[full_d].timeline.size() == r.memory[rep].timeline.size());
    for (std::size_t p = 0; p < f.memory[full_d].timeline.size(); ++p) {
      RC_ASSERT(f.memory[full_d].timeline[p].time_ps == r.memory[rep].timeline[p].time_ps);
      RC_ASSERT(f.memory[full_d].timeline[p].bytes_in_use ==
                r.memory[rep].timeline[p].bytes_in_use);
    }
    RC_ASSERT(f.compute_ps[full_d] == r.compute_ps[rep]);
    RC_ASSERT(f.device_end_ps[full_d] == r.device_end_ps[rep]);
    RC_ASSERT(f.exposed_communication_ps[full_d] == r.exposed_communication_ps[rep]);
    RC_ASSERT(f.communication_in_flight_ps[full_d] == r.communication_in_flight_ps[rep]);
    RC_ASSERT(f.overlapped_communication_ps[full_d] == r.overlapped_communication_ps[rep]);
    for (std::size_t s = 0; s < f.steps.size(); ++s) {
      RC_ASSERT(f.steps[s].device_end_ps[full_d] == r.steps[s].device_end_ps[rep]);
    }
  }
}

RC_GTEST_PROP(SymmetricStep, RunsAsTheFullStepOnRandomLayouts, ()) {
  const TransformerSpec spec = *layouts();
  const auto devices = static_cast<int>(spec.devices());
  // Presets come in whole nodes of 8 (or one node of fewer GPUs).
  RC_PRE(devices <= 64 && (devices <= 8 || devices % 8 == 0));
  const std::string preset = *rc::gen::element<std::string>("hgx-h100", "hgx-a100", "dgx-h100");
  const int steps = *rc::gen::inRange(1, 3);
  const Workload w = workload_of(spec, steps);
  const sim::SimOptions options{.cost_only = true};
  sim::Machine full_machine(machine_preset_with_devices(preset, devices), options);
  sim::Machine reduced_machine(machine_preset_with_devices(preset, devices), options);
  const WorkloadRun full = run_workload_symmetric(full_machine, w, false);
  const WorkloadRun reduced = run_workload_symmetric(reduced_machine, w, true);
  RC_TAG(devices, spec.pipeline);
  expect_same_run(spec, full, reduced);
}

// ---- Where symmetry breaks, the full run, saying why.

TransformerSpec tp4_dp4() {
  TransformerSpec spec = small_model();
  spec.layers = 2;
  spec.tensor = 4;
  spec.data = 4;
  spec.global_batch = 8;
  return spec;
}

TEST(SymmetricStep, AStragglerRunsTheFullStep) {
  sim::MachineSpec machine = machine_preset_with_devices("hgx-h100", 16);
  machine.faults.push_back(sim::fault_from_flag("straggler:device=5,factor=2,at=0us"));
  sim::Machine on(machine, {.cost_only = true});
  const WorkloadRun run = run_workload_symmetric(on, workload_of(tp4_dp4(), 1));
  EXPECT_TRUE(run.representatives.empty());
  EXPECT_EQ(run.note.rfind("full run: the machine has faults", 0), 0u) << run.note;
  EXPECT_EQ(run.log.memory.size(), 16u);
}

TEST(SymmetricStep, AnIrregularPlacementRunsTheFullStep) {
  // Mesh devices 3 and 8 swapped: data group 0 (mesh devices 0, 4, 8, 12) has three devices on
  // the first node, data group 1 two.
  sim::SimOptions options{.cost_only = true};
  options.placement.kind = sim::PlacementSpec::Kind::devices;
  for (int d = 0; d < 16; ++d) options.placement.devices.push_back(d == 3 ? 8 : d == 8 ? 3 : d);
  sim::Machine on(machine_preset_with_devices("hgx-h100", 16), options);
  const WorkloadRun run = run_workload_symmetric(on, workload_of(tp4_dp4(), 1));
  EXPECT_TRUE(run.representatives.empty());
  EXPECT_EQ(run.note.rfind("full run: irregular placement: the data groups lie differently", 0),
            0u)
      << run.note;
}

TEST(SymmetricStep, AMachineWithoutAFabricRunsTheFullStep) {
  sim::MachineSpec machine;
  machine.name = "switch";
  machine.devices = 16;
  machine.topology = topology::topology_from_text("switch", 16);
  sim::Machine on(machine, {.cost_only = true});
  const WorkloadRun run = run_workload_symmetric(on, workload_of(tp4_dp4(), 1));
  EXPECT_TRUE(run.representatives.empty());
  EXPECT_EQ(run.note.rfind("full run: the machine has no fabric", 0), 0u) << run.note;
}

TEST(SymmetricStep, FullSimulationRunsTheFullStep) {
  sim::Machine on(machine_preset_with_devices("hgx-h100", 16), {.cost_only = true});
  const WorkloadRun run = run_workload_symmetric(on, workload_of(tp4_dp4(), 1), false);
  EXPECT_TRUE(run.representatives.empty());
  EXPECT_EQ(run.note, "full run: --full-simulation");
}

}  // namespace
}  // namespace spmd
