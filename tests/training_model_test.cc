// The training model's parts (training/): model shapes and their parameters and FLOPs against
// the models' published sizes, GEMM wave quantization, the descriptions read from published
// rows (accelerator, precision, software), the step's laws (more micro-batches, recompute,
// pipeline bubbles, FP8), and the layout errors.

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <optional>

#include "reference/error.h"
#include "tests/error_of.h"
#include "training/activation_offload.h"
#include "training/gemm_time.h"
#include "training/ici_collectives.h"
#include "training/model_catalogue.h"
#include "training/step_time.h"
#include "training/training_memory.h"

namespace spmd::training {
namespace {

using test_errors::error_of;

ModelShape llama3_8b() {
  return ModelShape{.layers = 32, .d_model = 4096, .heads = 32, .kv_heads = 8, .head_dim = 128,
                    .d_ff = 14336, .vocabulary = 128256};
}

ModelShape deepseek_v3() {
  const ModelFamily family = model_family("DeepSeek-V3-671B");
  ModelShape model{.layers = 61, .d_model = 7168, .heads = 128, .kv_heads = 128, .head_dim = 56,
                   .d_ff = 2048, .vocabulary = 129280};
  model.latent_attention = family.latent_attention;
  model.moe = MixtureOfExperts{.experts = 256, .top_k = 8, .expert_d_ff = 2048,
                               .shared_experts = family.shared_experts,
                               .dense_layers = family.dense_layers,
                               .dense_d_ff = family.dense_d_ff};
  return model;
}

TrainingJob h100_job(const ModelShape& model, int devices, int tensor, int pipeline) {
  TrainingJob job;
  job.model = model;
  job.accelerator = *accelerator_from_description("H100-SXM5-80GB");
  job.software = software_from_description("Megatron-Bridge / Megatron-Core, NeMo container 26.04");
  job.layout.devices = devices;
  job.layout.tensor = tensor;
  job.layout.pipeline = pipeline;
  job.layout.data = devices / (tensor * pipeline);
  job.batch = Batch{.sequence = 4096, .global_sequences = 16L * job.layout.data,
                    .micro_batch_sequences = 1};
  check_training_job(job, "test");
  return job;
}

double step_seconds(const TrainingJob& job) {
  return predict_step(job, fabric_of(job.accelerator)).total_s();
}

TEST(ModelShape, ParametersMatchThePublishedModelSizes) {
  // Llama 3 8B: 8.03 B parameters (untied embedding and output layer).
  EXPECT_NEAR(total_parameters(llama3_8b()) / 1e9, 8.03, 0.01);
  // DeepSeek-V3: 671 B in all, 37 B active per token (its technical report, arXiv 2412.19437);
  // the multi-token-prediction module (14 B) is not part of the model trained here.
  EXPECT_NEAR(total_parameters(deepseek_v3()) / 1e9, 671, 10);
  EXPECT_NEAR(active_parameters(deepseek_v3()) / 1e9, 37, 1.5);
}

TEST(ModelShape, ModelFlopsAreSixTimesTheActiveParametersPlusAttention) {
  const ModelShape model = llama3_8b();
  const std::int64_t sequence = 8192;
  const double without_attention =
      6 * (total_parameters(model) - embedding_parameters(model));
  // Causal attention: 6 · layers · query_width · sequence per token (Megatron's count).
  const double attention = 6.0 * model.layers * model.query_width() * sequence;
  EXPECT_NEAR(model_flops_per_token(model, sequence) / (without_attention + attention), 1, 1e-9);
}

TEST(ModelShape, SlidingWindowsCutTheAttentionCore) {
  ModelShape model = llama3_8b();
  const double full = token_layer_flops(model, 8192).attention_core;
  model.sliding_window = 128;
  model.sliding_window_layer_share = 0.5;
  EXPECT_NEAR(token_layer_flops(model, 8192).attention_core / full, (4096.0 + 128) / 2 / 4096,
              1e-12);
}

TEST(GemmTime, WaveQuantizationWastesTheLastWave) {
  const Accelerator h100 = *accelerator_from_description("H100 SXM");
  // 132 tiles of 128 x 256 fill one wave; one more tile would take a second wave for itself
  // (133 of 264 slots), where 64 x 128 tiles fill 532 of 660 slots in five waves.
  EXPECT_DOUBLE_EQ(wave_efficiency(h100, 128 * 132, 256), 1);
  EXPECT_NEAR(wave_efficiency(h100, 128 * 133, 256), 532.0 / 660, 1e-12);
  // A 16 x 512 output: a quarter-area 64 x 128 tile is a quarter full, on 4 of 132 SMs.
  EXPECT_NEAR(wave_efficiency(h100, 16, 512), 0.25 * 4 / 132, 1e-12);
  // A thin GEMM is bound by memory: 8 tokens through a 16384 x 16384 matrix reads 512 MiB.
  const double thin = gemm_seconds(h100, MatmulPrecision::bf16, GemmShape{8, 16384, 16384});
  EXPECT_NEAR(thin, (8.0 * 16384 * 2 + 16384.0 * 16384 * 2 + 8.0 * 16384 * 2) /
                        (3.35e12 * memory_efficiency()),
              1e-9);
}

TEST(Descriptions, AcceleratorsPrecisionsAndSoftwareAsTablesWriteThem) {
  const Accelerator capped =
      *accelerator_from_description("H100-96GB-HBM2e (Grand Teton, 500W power limit)");
  EXPECT_EQ(capped.name, "H100 96GB");
  EXPECT_NEAR(capped.clock_scale, std::cbrt(500.0 / 700), 1e-12);
  EXPECT_EQ(accelerator_from_description("GB300")->preset, "gb300-nvl72");
  EXPECT_EQ(accelerator_from_description("A100-SXM-40GB")->memory_bytes, 40e9);
  EXPECT_TRUE(accelerator_from_description("TPU-v5p")->tpu);
  EXPECT_EQ(accelerator_family(*accelerator_from_description("TPU v4")), "tpu");
  EXPECT_FALSE(accelerator_from_description("Gaudi 3").has_value());
  EXPECT_EQ(accelerator_from_description("NVIDIA GH200 96GB")->preset, "gh200-quad");
  EXPECT_EQ(accelerator_from_description("H800 SXM5")->name, "H800 SXM");
  EXPECT_EQ(accelerator_family(*accelerator_from_description("AMD Instinct MI300X")), "cdna3");

  EXPECT_EQ(precision_from_description("mxfp8 (torchao, cuBLAS)"), MatmulPrecision::mxfp8);
  EXPECT_EQ(precision_from_description("fp8 (per-tensor current scaling)"), MatmulPrecision::fp8);
  EXPECT_EQ(precision_from_description("bf16 activations/matmuls, fp32 weights"),
            MatmulPrecision::bf16);
  EXPECT_EQ(precision_from_description("fp16 mixed (not stated)"), MatmulPrecision::bf16);
  EXPECT_EQ(error_of([] { precision_from_description("int4"); }),
            "precision 'int4': expected bf16, fp16, fp8, mxfp8 or nvfp4");

  const Software titan = software_from_description(
      "torchtitan 9dec370 (2024-12-26), torch 1963fc8 (2024-12-23), torchao eab345c; FSDP");
  EXPECT_EQ(titan.framework, Framework::torchtitan);
  EXPECT_FALSE(titan.fused_elementwise);
  EXPECT_EQ(titan.selective_recompute, SelectiveRecompute::every_second_matmul);
  EXPECT_EQ(software_from_description("Megatron-Bridge 0.2").selective_recompute,
            SelectiveRecompute::attention_core);
  EXPECT_FALSE(software_from_description("Megatron-LM (2021)").flash_attention);
  EXPECT_TRUE(software_from_description("Megatron-Core r0.8.0").flash_attention);
  EXPECT_EQ(software_from_description("").framework, Framework::megatron);
  EXPECT_EQ(software_from_description("DeepSpeed ZeRO-3").framework, Framework::pytorch);
  EXPECT_EQ(software_from_description("Megatron-DeepSpeed (2022)").framework, Framework::megatron);
  // NeMo AutoModel names NeMo but runs PyTorch's FSDP2 with Transformer Engine's kernels.
  const Software automodel = software_from_description("NeMo AutoModel (PyTorch backend, FSDP2)");
  EXPECT_EQ(automodel.framework, Framework::pytorch);
  EXPECT_TRUE(automodel.fused_elementwise);
  EXPECT_EQ(automodel.tensor_parallel_overlap, TensorParallelOverlap::none);
  EXPECT_EQ(error_of([] { software_from_description("Caffe 1.0"); }),
            "software 'Caffe 1.0': expected a framework the training model knows: Megatron-LM, "
            "Megatron-Core, NeMo, Megatron-Bridge, torchtitan, llm-foundry (Composer), MaxText "
            "(or another JAX trainer), DeepSpeed or PyTorch FSDP");
}

TEST(Descriptions, APrecisionTheChipLacksIsAnError) {
  const Accelerator h100 = *accelerator_from_description("H100 SXM");
  EXPECT_EQ(error_of([&] { require_precision(h100, MatmulPrecision::nvfp4, "row 3"); }),
            "row 3: precision nvfp4: H100 SXM has no nvfp4 tensor cores; expected bf16, fp16 or "
            "fp8");
  EXPECT_THROW(require_precision(h100, MatmulPrecision::mxfp8, "row 3"), Error);
  EXPECT_NO_THROW(require_precision(*accelerator_from_description("B200"), MatmulPrecision::mxfp8,
                                    "row 3"));
}

// The forms published tables write the older and PCIe parts in, each read as its own part with
// its spec sheet's figures (docs/training-model.md, "Accelerators"), never as a longer-named or
// SXM part.
TEST(Descriptions, OlderAndPcieAcceleratorsReadAsTheirOwnParts) {
  struct Case {
    const char* description;
    const char* name;
    const char* preset;
    const char* family;
    double bf16_tflops;
    double memory_gb;
    double bandwidth_tb_per_s;
    int sms;
    double watts;
  };
  const Case cases[] = {
      {"V100-SXM2-32GB", "V100 SXM2 32GB", "dgx-1-v100", "volta", 125, 32, 0.9, 80, 300},
      {"V100-SXM2-16GB", "V100 SXM2 16GB", "dgx-1-v100", "volta", 125, 16, 0.9, 80, 300},
      {"Tesla V100", "V100 SXM2 32GB", "dgx-1-v100", "volta", 125, 32, 0.9, 80, 300},
      {"Tesla V100-PCIE-16GB", "V100 PCIe 16GB", "pcie-v100", "volta", 112, 16, 0.9, 80, 250},
      {"V100S-PCIE-32GB", "V100S PCIe 32GB", "pcie-v100", "volta", 130, 32, 1.134, 80, 250},
      {"V100 SXM3 32GB", "V100 SXM3 32GB", "dgx-2-v100", "volta", 125, 32, 0.9, 80, 350},
      {"DGX-2", "V100 SXM3 32GB", "dgx-2-v100", "volta", 125, 32, 0.9, 80, 350},
      {"DGX-2H", "V100 SXM3 32GB (DGX-2H)", "dgx-2-v100", "volta", 130, 32, 0.9, 80, 450},
      {"32GB V100 (DGX-2H)", "V100 SXM3 32GB (DGX-2H)", "dgx-2-v100", "volta", 130, 32, 0.9, 80,
       450},
      {"H100 PCIe", "H100 PCIe", "pcie-h100", "hopper", 756.5, 80, 2.0, 114, 350},
      {"NVIDIA H100 80GB PCIe", "H100 PCIe", "pcie-h100", "hopper", 756.5, 80, 2.0, 114, 350},
      {"H100-NVL-94GB", "H100 NVL", "pcie-h100-nvl", "hopper", 835.5, 94, 3.9, 132, 400},
      {"H100 NVL", "H100 NVL", "pcie-h100-nvl", "hopper", 835.5, 94, 3.9, 132, 400},
      {"A100-PCIE-40GB", "A100 PCIe 40GB", "pcie-a100", "ampere", 312, 40, 1.555, 108, 250},
      {"A100 80GB PCIe", "A100 PCIe 80GB", "pcie-a100", "ampere", 312, 80, 1.935, 108, 300},
      {"MI250X", "MI250X GCD", "mi250x", "cdna2", 191.5, 64, 1.6384, 110, 280},
      {"AMD Instinct MI250", "MI250 GCD", "mi250x", "cdna2", 181.05, 64, 1.6384, 104, 280},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.description);
    const std::optional<Accelerator> a = accelerator_from_description(c.description);
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->name, c.name);
    EXPECT_EQ(a->preset, c.preset);
    EXPECT_EQ(accelerator_family(*a), c.family);
    EXPECT_DOUBLE_EQ(a->peak_flops_per_s(MatmulPrecision::bf16), c.bf16_tflops * 1e12);
    EXPECT_DOUBLE_EQ(a->memory_bytes, c.memory_gb * 1e9);
    EXPECT_DOUBLE_EQ(a->memory_bandwidth_bytes_per_s, c.bandwidth_tb_per_s * 1e12);
    EXPECT_EQ(a->streaming_multiprocessors, c.sms);
    EXPECT_DOUBLE_EQ(a->power_watts, c.watts);
    // Each preset has a fabric of the part's generation: the model can time its collectives.
    EXPECT_EQ(cost_model::generation_name(fabric_of(*a).generation), c.family);
  }
  // "NVL" only as a word of its own: an SXM H100 "with NVLink" stays the SXM part, and the
  // NVL72 racks stay theirs.
  EXPECT_EQ(accelerator_from_description("H100 SXM with NVLink")->name, "H100 SXM");
  EXPECT_EQ(accelerator_from_description("GB200 NVL72")->name, "GB200");
  // The published set's forms keep their parts.
  EXPECT_EQ(accelerator_from_description("A100-SXM-40GB")->name, "A100 SXM 40GB");
  EXPECT_EQ(accelerator_from_description("H100-SXM-80GB")->name, "H100 SXM");
}

TEST(Descriptions, VoltaRunsSixteenBitRowsAtItsFp16RateAndHasNoFp8) {
  const Accelerator v100 = *accelerator_from_description("V100-SXM2-32GB");
  // No BF16 on Volta: "bf16" and "fp16" rows both read as the 16-bit format, at the FP16 rate.
  EXPECT_EQ(precision_from_description("fp16"), MatmulPrecision::bf16);
  EXPECT_NO_THROW(require_precision(v100, MatmulPrecision::bf16, "row 7"));
  EXPECT_EQ(error_of([&] { require_precision(v100, MatmulPrecision::fp8, "row 7"); }),
            "row 7: precision fp8: V100 SXM2 32GB has no fp8 tensor cores; expected bf16 or fp16");
  EXPECT_THROW(require_precision(v100, MatmulPrecision::mxfp8, "row 7"), Error);
  const Accelerator mi250x = *accelerator_from_description("MI250X");
  EXPECT_THROW(require_precision(mi250x, MatmulPrecision::fp8, "row 8"), Error);
  // Volta has no flash attention kernels: it sustains less of its peak than Ampere.
  const Accelerator a100 = *accelerator_from_description("A100-SXM-80GB");
  EXPECT_LT(attention_kernel_efficiency(v100, AttentionKernel::native).forward,
            attention_kernel_efficiency(a100, AttentionKernel::native).forward);
}

TEST(StepTime, AVoltaStepIsSlowerThanTheSameStepOnAmpere) {
  TrainingJob job = h100_job(llama3_8b(), 16, 2, 1);
  job.accelerator = *accelerator_from_description("A100-SXM-80GB");
  const double a100 = step_seconds(job);
  job.accelerator = *accelerator_from_description("DGX-2H");
  const double v100 = step_seconds(job);
  // 130 against 312 TFLOP/s, 0.9 against 2 TB/s, and a slower fabric.
  EXPECT_GT(v100, 2 * a100);
  EXPECT_LT(v100, 4 * a100);
  job.accelerator = *accelerator_from_description("MI250X");
  EXPECT_GT(step_seconds(job), a100);
}

TEST(StepTime, PipelineBubbleIsPMinusOneOverVMicroBatches) {
  TrainingJob job = h100_job(llama3_8b(), 32, 1, 4);
  for (int virtual_stages : {1, 2, 4}) {
    job.layout.virtual_stages = virtual_stages;
    const StepTime step = predict_step(job, fabric_of(job.accelerator));
    const double micro_batch_s = (step.compute_s + step.tensor_parallel_s +
                                  step.context_parallel_s + step.expert_parallel_s) /
                                 job.micro_batches();
    EXPECT_NEAR(step.pipeline_bubble_s, micro_batch_s * 3.0 / virtual_stages, 1e-12);
    // Plain 1F1B sends between stages on the critical path; interleaving overlaps them.
    EXPECT_EQ(step.pipeline_transfer_s > 0, virtual_stages == 1);
  }
}

TEST(StepTime, RecomputeAndNarrowerFormatsMoveTheStepTheRightWay) {
  TrainingJob job = h100_job(llama3_8b(), 8, 1, 1);
  const double none = step_seconds(job);
  job.recompute = Recompute::full;
  const double full = step_seconds(job);
  EXPECT_GT(full, none * 1.2);
  job.recompute = Recompute::none;
  job.precision = MatmulPrecision::fp8;
  const double fp8 = step_seconds(job);
  EXPECT_LT(fp8, none);
  EXPECT_GT(fp8, none / 2);  // not every kernel is a GEMM
}

// Offloading every layer's activations frees the device of them; over PCIe the copies take
// longer than a layer's compute and show, over a Grace host's NVLink-C2C they hide under it.
TEST(StepTime, ActivationOffloadTradesMemoryForHostLinkTime) {
  TrainingJob job = h100_job(llama3_8b(), 8, 1, 1);
  const double kept_bytes = peak_memory(job).activations_bytes;
  const StepTime none = predict_step(job, fabric_of(job.accelerator));
  job.recompute = Recompute::offload;
  EXPECT_LT(peak_memory(job).activations_bytes, kept_bytes / 4);
  const StepTime over_pcie = predict_step(job, fabric_of(job.accelerator));
  EXPECT_GT(over_pcie.activation_offload_s, 0);
  EXPECT_DOUBLE_EQ(over_pcie.compute_s, none.compute_s);  // nothing recomputed
  cost_model::Fabric grace = fabric_of(job.accelerator);
  grace.host = cost_model::HostKind::grace;
  EXPECT_EQ(predict_step(job, grace).activation_offload_s, 0);
}

TEST(ActivationOffload, OnlyTheCopyBeyondTheNeighbouringComputeShows) {
  // 64 GB/s: a 6.4 GB layer copies in 0.1 s each way.
  EXPECT_DOUBLE_EQ(exposed_offload_seconds(6.4e9, 0.04, 0.08, 64e9), 0.06 + 0.02);
  EXPECT_EQ(exposed_offload_seconds(6.4e9, 0.1, 0.2, 64e9), 0);
  EXPECT_EQ(host_link_bytes_per_s(cost_model::GpuGeneration::ampere, cost_model::HostKind::x86),
            32e9);
  EXPECT_EQ(host_link_bytes_per_s(cost_model::GpuGeneration::blackwell,
                                  cost_model::HostKind::grace),
            450e9);
}

RC_GTEST_PROP(StepTimeLaws, MoreMicroBatchesNeverShortenTheStep, (int micro_batches_log2)) {
  const int exponent = std::abs(micro_batches_log2) % 5;
  TrainingJob job = h100_job(llama3_8b(), 64, 2, 4);
  job.batch.global_sequences = (std::int64_t{1} << exponent) * job.layout.data;
  const double fewer = step_seconds(job);
  job.batch.global_sequences *= 2;
  const double more = step_seconds(job);
  RC_ASSERT(more > fewer);
  RC_ASSERT(more < 2 * fewer + 1e-9);  // the bubble and the gradient reduction do not double
}

TEST(IciCollectives, RingsOverTheSpannedAxesAndHopLatency) {
  const Accelerator v5p = *accelerator_from_description("TPU-v5p");
  // 4 chips on one axis of the 4x4x4 cube: one bidirectional ring of 90 GB/s links at 0.85.
  const double one_axis = ici_collective_seconds(v5p, cost_model::TimedOp::all_gather, 1e9, 4, 1);
  EXPECT_NEAR(one_axis, 0.75 * 1e9 / (2 * 90e9 * 0.85) + 2 * 1e-6, 1e-12);
  // 16 chips span two axes: twice the rings.
  const double two_axes =
      ici_collective_seconds(v5p, cost_model::TimedOp::all_gather, 1e9, 16, 1);
  EXPECT_NEAR(two_axes, (15.0 / 16) * 1e9 / (4 * 90e9 * 0.85) + 2 * 2 * 1e-6, 1e-12);
  EXPECT_NEAR(ici_collective_seconds(v5p, cost_model::TimedOp::all_reduce, 1e9, 4, 1),
              2 * one_axis, 1e-12);
}

TEST(StepTime, ExpertParallelAllToAllsGrowWithTheExpertGroupAcrossNodes) {
  TrainingJob job = h100_job(deepseek_v3(), 256, 1, 8);
  job.precision = MatmulPrecision::fp8;
  job.layout.expert = 8;
  const double one_node = predict_step(job, fabric_of(job.accelerator)).expert_parallel_s;
  job.layout.expert = 32;
  const double four_nodes = predict_step(job, fabric_of(job.accelerator)).expert_parallel_s;
  EXPECT_GT(one_node, 0);
  EXPECT_GT(four_nodes, one_node);
}

TEST(StepTime, UlyssesExchangesAreExposedAndImbalanceSlowsTheExperts) {
  TrainingJob job = h100_job(llama3_8b(), 16, 1, 1);
  job.layout.context = 2;
  job.layout.data = 8;
  const StepTime ring = predict_step(job, fabric_of(job.accelerator));
  job.layout.context_exchange = ParallelLayout::ContextExchange::all_to_all;
  const StepTime ulysses = predict_step(job, fabric_of(job.accelerator));
  EXPECT_GT(ulysses.context_parallel_s, 0);
  EXPECT_EQ(ulysses.compute_s, ring.compute_s);

  TrainingJob moe = h100_job(deepseek_v3(), 256, 1, 8);
  moe.layout.expert = 8;
  const StepTime balanced = predict_step(moe, fabric_of(moe.accelerator));
  moe.moe_imbalance = 1.5;
  const StepTime skewed = predict_step(moe, fabric_of(moe.accelerator));
  EXPECT_GT(skewed.compute_s, balanced.compute_s);
  // The bytes grow by half; the collectives' fixed latencies do not.
  EXPECT_GT(skewed.expert_parallel_s, 1.4 * balanced.expert_parallel_s);
  EXPECT_LT(skewed.expert_parallel_s, 1.5 * balanced.expert_parallel_s);
}

TEST(StepTime, PyTorchsGatheredContextParallelMovesRepeatedHeadsAndMergesInFp32) {
  // 8B at 131072 tokens over cp 8 on one node, as torchtitan runs it.
  TrainingJob job = h100_job(llama3_8b(), 8, 1, 1);
  job.software = software_from_description("torchtitan 9dec370, torch.compile, Float8");
  job.recompute = Recompute::full;
  job.layout.context = 8;
  job.layout.data = 1;
  job.batch = Batch{.sequence = 131072, .global_sequences = 1, .micro_batch_sequences = 1};
  job.layout.context_exchange = ParallelLayout::ContextExchange::ring;
  const StepTime ring = predict_step(job, fabric_of(job.accelerator));
  job.layout.context_exchange = ParallelLayout::ContextExchange::all_gather;
  const StepTime gathered = predict_step(job, fabric_of(job.accelerator));
  // The fp32 merges and accumulations cost what a hidden ring does not.
  EXPECT_GT(gathered.context_parallel_s, ring.context_parallel_s);
  EXPECT_EQ(gathered.compute_s, ring.compute_s);
  // Keys and values at their own 8 heads move a quarter of the bytes of 32 repeated ones.
  job.software.kv_heads_repeated_for_attention = false;
  EXPECT_LT(predict_step(job, fabric_of(job.accelerator)).context_parallel_s,
            gathered.context_parallel_s);
}

TEST(StepTime, AsyncTensorParallelLeavesTheBackwardsInputGradientReduceScattersExposed) {
  TrainingJob job = h100_job(llama3_8b(), 64, 8, 1);
  job.software = software_from_description("torchtitan 820504e, torch.compile, vanilla TP");
  EXPECT_EQ(job.software.tensor_parallel_overlap, TensorParallelOverlap::none);
  const double vanilla = predict_step(job, fabric_of(job.accelerator)).tensor_parallel_s;
  job.software = software_from_description("torchtitan 820504e, torch.compile, async TP");
  EXPECT_EQ(job.software.tensor_parallel_overlap, TensorParallelOverlap::matmul_adjacent);
  const double async_tp = predict_step(job, fabric_of(job.accelerator)).tensor_parallel_s;
  job.software.tensor_parallel_overlap = TensorParallelOverlap::every_collective;
  const double userbuffers = predict_step(job, fabric_of(job.accelerator)).tensor_parallel_s;
  EXPECT_LT(async_tp, vanilla);
  EXPECT_GT(async_tp, userbuffers);
}

TEST(StepTime, SeparateProjectionsReadTheInputOncePerGemm) {
  // Under tp 8 torchtitan's K and V projections are 128 columns wide: memory-bound GEMMs that
  // each read the layer's whole input.
  TrainingJob job = h100_job(llama3_8b(), 8, 8, 1);
  const double fused = predict_step(job, fabric_of(job.accelerator)).compute_s;
  job.software.separate_input_projections = true;
  const double separate = predict_step(job, fabric_of(job.accelerator)).compute_s;
  EXPECT_GT(separate, 1.01 * fused);
}

TEST(StepTime, ShardGradOpGathersOnceAndHoldsTheStagesWeights) {
  // 70B on 16 H100 with FSDP over all of them and 8 micro-batches of 2: the gathers cross nodes.
  ModelShape model = llama3_8b();
  model.layers = 80;
  model.d_model = 8192;
  model.heads = 64;
  model.d_ff = 28672;
  TrainingJob job = h100_job(model, 16, 1, 1);
  job.layout.fsdp = 16;
  job.batch.micro_batch_sequences = 2;
  job.batch.global_sequences = 16 * 2 * 8;
  const StepTime full_shard = predict_step(job, fabric_of(job.accelerator));
  const TrainingMemory full_shard_memory = peak_memory(job);
  job.layout.reshard_after_forward = false;
  const StepTime shard_grad_op = predict_step(job, fabric_of(job.accelerator));
  EXPECT_LE(shard_grad_op.data_parallel_s, full_shard.data_parallel_s);
  EXPECT_GT(peak_memory(job).gathered_weights_bytes,
            10 * full_shard_memory.gathered_weights_bytes);
}

TEST(TrainingJob, LayoutsThatContradictThemselvesAreErrors) {
  TrainingJob job = h100_job(llama3_8b(), 8, 2, 1);
  job.layout.data = 3;
  EXPECT_EQ(error_of([&] { check_training_job(job, "runs.csv:4"); }),
            "runs.csv:4: dp 3: expected dp x tp x pp x cp = gpus_total (8), got 3 x 2 x 1 x 1 = 6");
  job = h100_job(deepseek_v3(), 64, 1, 1);
  job.layout.expert = 3;
  EXPECT_EQ(error_of([&] { check_training_job(job, "runs.csv:5"); }),
            "runs.csv:5: ep 3: expected a divisor of moe_experts (256)");
  job = h100_job(llama3_8b(), 8, 1, 1);
  job.batch.global_sequences = 12;
  EXPECT_EQ(error_of([&] { check_training_job(job, "runs.csv:6"); }),
            "runs.csv:6: global_batch_seqs 12: expected a positive multiple of dp x micro_batch "
            "(8 x 1)");
}

}  // namespace
}  // namespace spmd::training
