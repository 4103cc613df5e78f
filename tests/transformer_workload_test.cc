// The `transformer` workload (docs/workload-format.md, "transformer"): its FLOPs and memory
// against the papers' formulas computed by hand, its errors, and laws of the simulated step
// (the pipeline bubble, data parallelism splitting compute, tensor parallelism inside a node).

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "sim/machine.h"
#include "sim/machine_presets.h"
#include "sim/mesh_placement.h"
#include "sim/sim_errors.h"
#include "tests/error_of.h"
#include "traces/run_report.h"
#include "workloads/transformer_flops.h"
#include "workloads/transformer_memory.h"
#include "workloads/transformer_report.h"
#include "workloads/transformer_step.h"
#include "workloads/workload.h"

namespace spmd {
namespace {

using nlohmann::json;
using test_errors::error_of;

// GPT-3 175B as Korthikanti et al. 2022 (arXiv 2205.05198) Table 3 runs it: 96 heads, hidden
// 12288, 96 layers, sequence 2048, vocabulary 51200, TP 8, PP 8, global batch 64.
json gpt3_175b() {
  return {{"kind", "transformer"}, {"layers", 96},       {"d_model", 12288},
          {"heads", 96},           {"d_ff", 49152},      {"vocabulary", 51200},
          {"gated_mlp", false},    {"sequence", 2048},   {"global_batch", 64},
          {"tensor", 8},           {"pipeline", 8}};
}

// A model small enough to simulate in milliseconds.
json small_model() {
  return {{"kind", "transformer"}, {"layers", 4},       {"d_model", 1024},
          {"heads", 8},            {"d_ff", 4096},      {"vocabulary", 32000},
          {"sequence", 1024},      {"global_batch", 16}};
}

TransformerSpec spec_of(json description) { return workload_from_json(description).transformer; }

json with(json description, const json& changes) {
  description.update(changes);
  return description;
}

traces::RunTotals run_on(const std::string& preset, int devices, const json& description) {
  sim::Machine machine(machine_preset_with_devices(preset, devices), {.cost_only = true});
  return traces::run_totals(run_workload(machine, workload_from_json(description)));
}

// ---- FLOPs

TEST(TransformerFlops, ModelFlopsAreNarayanansFormulaWithoutRecomputation) {
  // Narayanan et al. 2021 (arXiv 2104.04473) Eq. 3 counts 96·B·s·l·h²(1 + s/6h + V/16lh) with
  // recomputation's extra forward; without it, three passes: 72·B·s·l·h²(1 + s/6h + V/12lh).
  const TransformerSpec spec = spec_of(gpt3_175b());
  const double B = 64, s = 2048, l = 96, h = 12288, V = 51200;
  const double expected = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(model_flops_per_step(spec) / expected, 1.0, 1e-12);
  // Korthikanti et al. Table 5: 13.75 s per iteration on 64 A100s (312 TFLOP/s) is 51.4% MFU.
  EXPECT_NEAR(model_flops_per_step(spec) / (64 * 312e12 * 13.75), 0.514, 0.001);
}

TEST(TransformerFlops, GroupedQueryAttentionAndGatedMlpCountTheirOwnMatrices) {
  // Llama 3 8B, one sequence of 4096: Q is 4096 wide, K and V 8 heads of 128 each.
  const TransformerSpec spec = spec_of({{"kind", "transformer"}, {"layers", 32},
                                        {"d_model", 4096}, {"heads", 32}, {"kv_heads", 8},
                                        {"d_ff", 14336}, {"vocabulary", 128256},
                                        {"sequence", 4096}, {"global_batch", 1}});
  const LayerFlops flops = layer_forward_flops(spec, 1);
  const double s = 4096, h = 4096;
  EXPECT_DOUBLE_EQ(flops.qkv, 2 * s * h * (h + 2 * 1024));
  EXPECT_DOUBLE_EQ(flops.attention_core, 4 * s * s * h);
  EXPECT_DOUBLE_EQ(flops.output_projection, 2 * s * h * h);
  EXPECT_DOUBLE_EQ(flops.mlp, 2 * s * h * 14336 * 3);
  // 8.03e9 parameters, as Meta's model card rounds them to 8B.
  EXPECT_EQ(model_parameters(spec), 8'030'261'248);
}

// ---- Memory

TEST(TransformerMemory, ActivationsPerLayerAreKorthikantisFormulas) {
  // Korthikanti et al. §4: per layer, 16-bit activations, a = heads, t = tensor.
  const TransformerSpec base = spec_of(with(gpt3_175b(), {{"pipeline", 1}, {"global_batch", 1}}));
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  const double sbh = s * b * h;
  EXPECT_NEAR(layer_activation_bytes(base), sbh * (10 + 24 / t + 5 * a * s / (h * t)), 1.0);
  TransformerSpec spec = base;
  spec.tensor = 1;
  EXPECT_NEAR(layer_activation_bytes(spec), sbh * (34 + 5 * a * s / h), 1.0);
  spec = base;
  spec.sequence_parallel = true;
  EXPECT_NEAR(layer_activation_bytes(spec), sbh / t * (34 + 5 * a * s / h), 1.0);
  spec.recompute = Recompute::selective;
  EXPECT_NEAR(layer_activation_bytes(spec), sbh * 34 / t, 1.0);
  spec = base;
  spec.recompute = Recompute::full;
  EXPECT_NEAR(layer_activation_bytes(spec), 2 * sbh, 1.0);
}

TEST(TransformerMemory, MixedPrecisionAdamIsSixteenBytesPerParameter) {
  // ZeRO (arXiv 1910.02054) §3.1: bf16 weights and gradients, fp32 master weights, m and v.
  const TransformerSpec spec = spec_of(small_model());
  const TransformerMemory memory = stage_memory(spec, 0);
  const double params = static_cast<double>(model_parameters(spec) - spec.d_model);  // final norm
  EXPECT_DOUBLE_EQ(memory.weights, 2 * params);
  EXPECT_DOUBLE_EQ(memory.gradients, 2 * params);
  EXPECT_DOUBLE_EQ(memory.optimizer_states, 12 * params);
  TransformerSpec sgd = spec;
  sgd.optimizer = Optimizer::sgd;
  EXPECT_DOUBLE_EQ(stage_memory(sgd, 0).optimizer_states, 4 * params);
  TransformerSpec sharded = spec_of(with(small_model(), {{"data", 4}, {"distributed_optimizer", true}}));
  EXPECT_DOUBLE_EQ(stage_memory(sharded, 0).optimizer_states, 3 * params);
}

TEST(TransformerMemory, OneFOneBFirstStageHoldsPipelineDepthMicroBatches) {
  const TransformerSpec spec = spec_of(gpt3_175b());  // m = 64, p = 8
  EXPECT_EQ(stage_memory(spec, 0).micro_batches_in_flight, 8);
  EXPECT_EQ(stage_memory(spec, 7).micro_batches_in_flight, 1);
  EXPECT_DOUBLE_EQ(stage_memory(spec, 0).activations, 8 * 12 * layer_activation_bytes(spec));
}

TEST(TransformerMemory, OutOfMemoryNamesEveryPart) {
  // Llama 3 8B with Adam on one H100: 16 bytes x 8.03e9 parameters alone pass 80 GB, and a
  // sequence of 4096 without recomputation holds 32 x 3.3 GB of activations (mostly scores).
  const json llama = {{"kind", "transformer"}, {"layers", 32},      {"d_model", 4096},
                      {"heads", 32},           {"kv_heads", 8},     {"d_ff", 14336},
                      {"vocabulary", 128256},  {"sequence", 4096},  {"global_batch", 1}};
  sim::Machine machine(machine_preset_with_devices("hgx-h100", 1), {.cost_only = true});
  try {
    run_workload(machine, workload_from_json(llama));
    FAIL() << "expected an out-of-memory error";
  } catch (const sim::OutOfMemoryError& e) {
    EXPECT_STREQ(e.what(),
                 "out of memory: transformer device 0 (pipeline stage 0) needs 235.8 GB (weights "
                 "16.1 GB, gradients 16.1 GB, optimizer states 96.4 GB, activations 107.3 GB (1 "
                 "micro-batch in flight)) but has 80.0 GB");
  }
}

// ---- Errors

TEST(TransformerErrors, FieldsAreCheckedAndNamed) {
  EXPECT_EQ(error_of([] { spec_of(with(small_model(), {{"kv_heads", 3}})); }),
            "workload: heads: 8, expected a multiple of kv_heads (3)");
  EXPECT_EQ(error_of([] { spec_of(with(small_model(), {{"recompute", "some"}})); }),
            "workload.recompute: \"some\", expected none, selective or full");
  EXPECT_EQ(error_of([] { spec_of(with(small_model(), {{"matmul_efficiency", 1.5}})); }),
            "workload.matmul_efficiency: 1.5, expected a fraction of peak in [0.001, 1]");
  EXPECT_EQ(error_of([] { spec_of(with(small_model(), {{"global_batch", 6}, {"data", 4}})); }),
            "workload: global_batch: 6, expected a multiple of data x fsdp x micro_batch_size (4)");
  EXPECT_EQ(error_of([] { spec_of(with(small_model(), {{"layers", 0}})); }),
            "workload.layers: 0, expected a positive integer");
  EXPECT_EQ(error_of([] { run_on("hgx-h100", 8, with(small_model(), {{"tensor", 4}})); }),
            "workload: data 1 x fsdp 1 x tensor 4 x pipeline 1 x context 1 = 4 devices, expected "
            "the machine's 8");
}

TEST(TransformerErrors, DataAutoTakesTheDevicesTheOthersLeave) {
  const TransformerSpec spec = spec_of(with(small_model(), {{"data", "auto"}, {"tensor", 8}}));
  EXPECT_EQ(transformer_for_devices(spec, 16).data, 2);
  EXPECT_EQ(error_of([&] { transformer_for_devices(spec, 12); }),
            "workload.data: \"auto\" on 12 devices, expected a device count that fsdp x tensor "
            "x pipeline x context (8) divides");
  EXPECT_EQ(error_of([&] { transformer_for_devices(spec, 256); }),
            "workload.global_batch: 16, expected a multiple of data x fsdp x micro_batch_size "
            "(32, with data \"auto\" = 32 on 256 devices)");
  EXPECT_EQ(error_of([] { spec_of(with(small_model(), {{"data", "most"}})); }),
            "workload.data: \"most\", expected a positive integer or \"auto\"");
}

TEST(TransformerErrors, UnknownFieldIsAnError) {
  const std::string message =
      error_of([] { spec_of(with(small_model(), {{"tensor_parallel", 8}})); });
  EXPECT_NE(message.find("tensor_parallel"), std::string::npos) << message;
}

// ---- The step

TEST(TransformerStep, CollectiveCountIsTheOneIssued) {
  const json every_axis = with(small_model(), {{"data", 2}, {"fsdp", 2}, {"tensor", 2},
                                               {"pipeline", 2}, {"context", 2},
                                               {"sequence_parallel", true},
                                               {"distributed_optimizer", true},
                                               {"recompute", "full"}, {"global_batch", 32}});
  sim::Machine machine(machine_preset_with_devices("hgx-h100", 32), {.cost_only = true});
  const Workload workload = workload_from_json(every_axis);
  const sim::CostLog log = run_workload(machine, workload);
  // Each collective is logged once per call (all its groups together).
  EXPECT_EQ(static_cast<std::int64_t>(log.collective_count),
            transformer_collectives_per_step(workload.transformer));
}

TEST(TransformerStep, PipelineStepIsOneFOneBTime) {
  // p = 4 stages on four GPUs: each micro-batch adds one tick (a micro-batch's forward and
  // backward on a stage, with its sends to the neighbouring stages), so the step grows by the
  // same amount per micro-batch, and the p - 1 ticks of fill and drain come on top.
  const auto step_ps = [](int micro_batches) {
    return static_cast<double>(
        run_on("hgx-h100", 4,
               with(small_model(), {{"pipeline", 4}, {"global_batch", micro_batches}}))
            .step_ps);
  };
  const double at_4 = step_ps(4), at_8 = step_ps(8), at_16 = step_ps(16);
  const double tick_from_4 = (at_8 - at_4) / 4, tick_from_8 = (at_16 - at_8) / 8;
  EXPECT_NEAR(tick_from_8 / tick_from_4, 1.0, 0.01) << tick_from_4 << " " << tick_from_8;
  EXPECT_NEAR(at_16 / tick_from_8, 16 + 3, 1.0) << at_16 << " " << tick_from_8;
}

RC_GTEST_PROP(TransformerStep, MoreMicroBatchesNeverIncreaseTheBubble, ()) {
  const int pipeline = *rc::gen::inRange(1, 65);
  const int micro_batches = *rc::gen::inRange(1, 1025);
  TransformerSpec fewer = spec_of(small_model());
  fewer.pipeline = pipeline;
  fewer.global_batch = micro_batches;
  TransformerSpec more = fewer;
  more.global_batch = micro_batches + *rc::gen::inRange(1, 1025);
  RC_ASSERT(pipeline_bubble_fraction(more) <= pipeline_bubble_fraction(fewer));
  RC_ASSERT(pipeline_bubble_fraction(fewer) >= 0.0);
  RC_ASSERT(pipeline_bubble_fraction(fewer) < 1.0);
}

TEST(TransformerStep, DoublingDataParallelismHalvesEachDevicesCompute) {
  const json model = with(small_model(), {{"global_batch", 64}});
  const traces::RunTotals two = run_on("hgx-h100", 2, with(model, {{"data", 2}}));
  const traces::RunTotals four = run_on("hgx-h100", 4, with(model, {{"data", 4}}));
  // The optimizer's update is the same on every replica: within 2%.
  EXPECT_NEAR(static_cast<double>(two.compute_ps) / static_cast<double>(four.compute_ps), 2.0,
              0.04);
}

TEST(TransformerStep, TensorGroupsStayInsideANode) {
  // Two nodes of eight H100s, data 2 x tensor 8: every tensor group is one node.
  const TransformerSpec spec = spec_of(with(small_model(), {{"data", 2}, {"tensor", 8}}));
  sim::Machine machine(machine_preset_with_devices("hgx-h100", 16), {.cost_only = true});
  const Mesh mesh = transformer_mesh(spec);
  const sim::MeshPlacement placement({}, mesh, machine.topology());
  for (int group = 0; group < 2; ++group) {
    std::set<int> nodes;
    for (int rank = 0; rank < 8; ++rank) nodes.insert(placement.device(group * 8 + rank) / 8);
    EXPECT_EQ(nodes.size(), 1u) << "tensor group " << group;
  }
}

TEST(TransformerStep, ReportGivesStepTokensAndMfu) {
  const TransformerSpec spec = spec_of(gpt3_175b());
  const sim::MachineSpec a100 = machine_preset_with_devices("hgx-a100", 64);
  const TransformerStepFigures figures =
      transformer_step_figures(spec, a100, 13'750'000'000'000, 1'375'000'000'000);
  EXPECT_NEAR(figures.model_flops_utilization, 0.514, 0.001);
  EXPECT_NEAR(figures.tokens_per_s, 64 * 2048 / 13.75, 1e-6);
  EXPECT_NEAR(figures.exposed_communication_share, 0.1, 1e-12);
  EXPECT_NEAR(figures.bubble_fraction, 7.0 / 71.0, 1e-12);
}

}  // namespace
}  // namespace spmd
