#include "training/accelerator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "cost_model/roofline.h"
#include "reference/error.h"
#include "support/name_table.h"

namespace spmd::training {
namespace {

constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;

// Spec sheets' dense peaks (NVIDIA quotes tensor rates "with sparsity": half of those), memory
// and board power: nvidia.com/en-us/data-center/{a100,h100,h200,dgx-b200,dgx-gb200,dgx-gb300}
// and the Blackwell datasheet; SM counts from the architecture whitepapers (A100 108, H100 SXM
// 132, B200 148, B300 160). docs/training-model.md lists them.
Accelerator make(std::string name, std::string preset, cost_model::GpuGeneration generation,
                 double bf16_tflops, double fp8_tflops, double fp4_tflops, double memory_gb,
                 double bandwidth_tb_per_s, int sms, double watts) {
  Accelerator a;
  a.name = std::move(name);
  a.preset = std::move(preset);
  a.generation = generation;
  a.bf16_flops_per_s = bf16_tflops * kTera;
  a.fp8_flops_per_s = fp8_tflops * kTera;
  a.fp4_flops_per_s = fp4_tflops * kTera;
  a.memory_bytes = memory_gb * kGiga;
  a.memory_bandwidth_bytes_per_s = bandwidth_tb_per_s * kTera;
  a.streaming_multiprocessors = sms;
  a.power_watts = watts;
  if (generation == cost_model::GpuGeneration::ampere) a.gemm_tile_columns = 128;
  return a;
}

// TPUs (cloud.google.com/tpu/docs/{v4,v5e,v5p-training,v6e}): bf16 peak, HBM, its bandwidth,
// matrix units (128 x 128; v6e's two are 256 x 256), the torus and its links' one-way rate (the
// machine presets' ICI links, docs/machine-presets.md).
Accelerator tpu(std::string name, double bf16_tflops, double memory_gb, double bandwidth_tb_per_s,
                int matrix_units, int matrix_unit_side, int dimensions, int side,
                double link_gb_per_s) {
  Accelerator a;
  a.name = std::move(name);
  a.tpu = true;
  a.bf16_flops_per_s = bf16_tflops * kTera;
  a.memory_bytes = memory_gb * kGiga;
  a.memory_bandwidth_bytes_per_s = bandwidth_tb_per_s * kTera;
  a.streaming_multiprocessors = matrix_units;
  a.gemm_tile_rows = matrix_unit_side;
  a.gemm_tile_columns = matrix_unit_side;
  a.torus_dimensions = dimensions;
  a.torus_side = side;
  a.ici_link_bytes_per_s = link_gb_per_s * kGiga;
  return a;
}

Accelerator ultra(Accelerator accelerator) {
  accelerator.doubled_softmax_exponentials = true;
  return accelerator;
}

struct CatalogueEntry {
  std::vector<std::string_view> words;  // every one must appear in the description
  Accelerator accelerator;
  // Each must appear as a word of its own, not followed by a letter: "H100 NVL" but not
  // "H100 with NVLink".
  std::vector<std::string_view> whole_words = {};
};

const std::vector<CatalogueEntry>& catalogue() {
  using G = cost_model::GpuGeneration;
  // Most specific first: "GB300" before "B300", the 40 GB A100 before the 80 GB one.
  static const std::vector<CatalogueEntry> entries = {
      {{"gb300"}, ultra(make("GB300", "gb300-nvl72", G::blackwell, 2500, 5000, 15000, 288, 8, 160, 1400))},
      {{"gb200"}, make("GB200", "gb200-nvl72", G::blackwell, 2500, 5000, 10000, 186, 8, 148, 1200)},
      {{"b300"}, ultra(make("B300", "hgx-b300", G::blackwell, 2250, 4500, 13500, 288, 8, 160, 1100))},
      {{"b200"}, make("B200", "hgx-b200", G::blackwell, 2250, 4500, 9000, 180, 8, 148, 1000)},
      // GH200: an H100's compute with 96 GB of HBM3 at 4 TB/s beside a Grace CPU (the quad
      // node of the gh200-quad preset); before "h200", which its name contains.
      {{"gh200"}, make("GH200", "gh200-quad", G::hopper, 989.4, 1978.9, 0, 96, 4, 132, 700)},
      {{"h200"}, make("H200 SXM", "hgx-h200", G::hopper, 989.4, 1978.9, 0, 141, 4.8, 132, 700)},
      // H800: the H100 SXM's compute and memory with NVLink cut to 400 GB/s; its fabric is taken
      // as the H100's (450 GB/s).
      {{"h800"}, make("H800 SXM", "hgx-h100", G::hopper, 989.4, 1978.9, 0, 80, 3.35, 132, 700)},
      // H100 NVL (the H100 datasheet, nvidia.com/en-us/data-center/h100): the full 132 SMs at
      // 350-400 W, 94 GB of HBM3 at 3.9 TB/s, BF16 1,671 and FP8 3,341 TFLOP/s with sparsity;
      // PCIe cards joined in pairs by NVLink bridges. Before the other H100s.
      {{"h100"}, make("H100 NVL", "pcie-h100-nvl", G::hopper, 835.5, 1670.5, 0, 94, 3.9, 132, 400),
       {"nvl"}},
      // H100 PCIe (the same datasheet; 114 SMs, the whitepaper): BF16 1,513 and FP8 3,026
      // TFLOP/s with sparsity, 80 GB of HBM2e at 2.0 TB/s, 350 W, in a PCIe Gen5 server.
      {{"h100", "pcie"},
       make("H100 PCIe", "pcie-h100", G::hopper, 756.5, 1513, 0, 80, 2.0, 114, 350)},
      // H100 with 96 GB of HBM2e at 2.4 TB/s (Meta's Grand Teton hosts, as torchtitan's H100
      // benchmarks describe them); the 96 GB HBM3 part keeps the SXM's 3.35 TB/s.
      {{"h100", "96", "hbm2e"},
       make("H100 96GB", "hgx-h100", G::hopper, 989.4, 1978.9, 0, 96, 2.4, 132, 700)},
      {{"h100", "96"},
       make("H100 96GB", "hgx-h100", G::hopper, 989.4, 1978.9, 0, 96, 3.35, 132, 700)},
      {{"h100"}, make("H100 SXM", "hgx-h100", G::hopper, 989.4, 1978.9, 0, 80, 3.35, 132, 700)},
      // A100 PCIe cards (nvidia.com/en-us/data-center/a100): the SXM part's peaks and SMs at
      // 250 W (40 GB, 1,555 GB/s) or 300 W (80 GB, 1,935 GB/s), in a PCIe Gen4 server.
      {{"a100", "pcie", "40"},
       make("A100 PCIe 40GB", "pcie-a100", G::ampere, 312, 0, 0, 40, 1.555, 108, 250)},
      {{"a100", "pcie"},
       make("A100 PCIe 80GB", "pcie-a100", G::ampere, 312, 0, 0, 80, 1.935, 108, 300)},
      {{"a100", "40"},
       make("A100 SXM 40GB", "hgx-a100", G::ampere, 312, 0, 0, 40, 1.555, 108, 400)},
      {{"a100"}, make("A100 SXM 80GB", "hgx-a100", G::ampere, 312, 0, 0, 80, 2.039, 108, 400)},
      // A800: the A100 80GB with NVLink cut to 400 GB/s; its fabric taken as the A100's.
      {{"a800"}, make("A800 SXM 80GB", "hgx-a100", G::ampere, 312, 0, 0, 80, 2.039, 108, 400)},
      // AMD Instinct (amd.com's spec pages, the mi3xx presets): dense bf16 and fp8 peaks, MXFP4
      // for MI355X / MI350X (the microscaled 8-bit format runs at the fp8 rate), compute units
      // as the wave model's "SMs".
      {{"mi300x"}, make("MI300X", "mi300x", G::cdna3, 1307.4, 2614.9, 0, 192, 5.3, 304, 750)},
      {{"mi325x"}, make("MI325X", "mi325x", G::cdna3, 1307.4, 2614.9, 0, 256, 6, 304, 1000)},
      {{"mi355x"}, make("MI355X", "mi355x", G::cdna4, 2516.6, 5033.2, 0, 288, 8, 256, 1400)},
      {{"mi350x"}, make("MI350X", "mi350x", G::cdna4, 2306.9, 4613.8, 0, 288, 8, 256, 1000)},
      // MI250X and MI250 (amd.com's Instinct spec pages): two GCDs a package, each of which
      // frameworks see as one device, so the figures are per GCD: half the package's 383 (MI250:
      // 362.1) TFLOP/s BF16, which CDNA 2 runs densely and without FP8; 64 GB of HBM2e at 1.6 TB/s;
      // 110 (104) compute units; half the package's 560 W.
      {{"mi250x"}, make("MI250X GCD", "mi250x", G::cdna2, 191.5, 0, 0, 64, 1.6384, 110, 280)},
      {{"mi250"}, make("MI250 GCD", "mi250x", G::cdna2, 181.05, 0, 0, 64, 1.6384, 104, 280)},
      // V100 (the V100 datasheet, nvidia.com/en-us/data-center/v100, and the Volta whitepaper's
      // 80 SMs): 125 TFLOP/s of FP16 tensor math (no BF16, no FP8: a "bf16" row runs at the FP16
      // rate), 900 GB/s of HBM2. SXM3 in DGX-2 (350 W) and DGX-2H (450 W, 130 TFLOP/s: 2.1
      // PFLOP/s for its 16); SXM2 in DGX-1 (300 W, 16 or 32 GB); PCIe at 250 W (112 TFLOP/s;
      // V100S: 130 TFLOP/s and 1,134 GB/s). Before "v100" and "dgx-2", which they contain.
      {{"dgx-2h"}, make("V100 SXM3 32GB (DGX-2H)", "dgx-2-v100", G::volta, 130, 0, 0, 32, 0.9, 80, 450)},
      {{"dgx2h"}, make("V100 SXM3 32GB (DGX-2H)", "dgx-2-v100", G::volta, 130, 0, 0, 32, 0.9, 80, 450)},
      {{"dgx-2"}, make("V100 SXM3 32GB", "dgx-2-v100", G::volta, 125, 0, 0, 32, 0.9, 80, 350)},
      {{"dgx2"}, make("V100 SXM3 32GB", "dgx-2-v100", G::volta, 125, 0, 0, 32, 0.9, 80, 350)},
      {{"v100", "sxm3"}, make("V100 SXM3 32GB", "dgx-2-v100", G::volta, 125, 0, 0, 32, 0.9, 80, 350)},
      {{"v100s"}, make("V100S PCIe 32GB", "pcie-v100", G::volta, 130, 0, 0, 32, 1.134, 80, 250)},
      {{"v100", "pcie", "16"},
       make("V100 PCIe 16GB", "pcie-v100", G::volta, 112, 0, 0, 16, 0.9, 80, 250)},
      {{"v100", "pcie"}, make("V100 PCIe 32GB", "pcie-v100", G::volta, 112, 0, 0, 32, 0.9, 80, 250)},
      {{"v100", "16"}, make("V100 SXM2 16GB", "dgx-1-v100", G::volta, 125, 0, 0, 16, 0.9, 80, 300)},
      {{"v100"}, make("V100 SXM2 32GB", "dgx-1-v100", G::volta, 125, 0, 0, 32, 0.9, 80, 300)},
      {{"tpu", "v4"}, tpu("TPU v4", 275, 34.4, 1.2, 8, 128, 3, 4, 45)},
      {{"tpu", "v5e"}, tpu("TPU v5e", 197, 16, 0.819, 4, 128, 2, 16, 45)},
      {{"tpu", "v5p"}, tpu("TPU v5p", 459, 95, 2.765, 8, 128, 3, 4, 90)},
      {{"tpu", "v6e"}, tpu("TPU v6e", 918, 32, 1.638, 2, 256, 2, 16, 90)},
      {{"trillium"}, tpu("TPU v6e", 918, 32, 1.638, 2, 256, 2, 16, 90)},
  };
  return entries;
}

// "500W power limit" in a description: the clock a power-capped part sustains. Dynamic power
// goes as f·V² and the voltage falls with the clock across the DVFS range, so power ~ f³ and the
// clock scales as the cube root of the power ratio (500 W of 700 W: 0.89, between the SXM part
// and the 350-400 W H100 NVL's 835 TFLOP/s, as torchtitan's benchmark notes say).
double clock_scale_of(const std::string& lower, double rated_watts) {
  const std::size_t limit = lower.find("w power limit");
  if (limit == std::string::npos) return 1;
  std::size_t digits = limit;
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(lower[digits - 1]))) --digits;
  if (digits == limit) return 1;
  const double watts = std::stod(lower.substr(digits, limit - digits));
  return std::min(1.0, std::cbrt(watts / rated_watts));
}

// `word` somewhere in `lower` and not followed by a letter ("h100-nvl-94gb", "h100 nvl", not
// "nvlink").
bool has_whole_word(const std::string& lower, std::string_view word) {
  for (std::size_t at = lower.find(word); at != std::string::npos;
       at = lower.find(word, at + 1)) {
    const std::size_t end = at + word.size();
    if (end == lower.size() || !std::isalpha(static_cast<unsigned char>(lower[end]))) return true;
  }
  return false;
}

}  // namespace

double Accelerator::peak_flops_per_s(MatmulPrecision precision) const {
  double peak = 0;
  switch (precision) {
    case MatmulPrecision::bf16: peak = bf16_flops_per_s; break;
    case MatmulPrecision::fp8: peak = fp8_flops_per_s; break;
    // Microscaled formats need block-scaled matrix cores: Blackwell's, CDNA 4's.
    case MatmulPrecision::mxfp8:
      peak = generation == cost_model::GpuGeneration::blackwell ||
                     generation == cost_model::GpuGeneration::cdna4
                 ? fp8_flops_per_s
                 : 0;
      break;
    case MatmulPrecision::nvfp4: peak = fp4_flops_per_s; break;
  }
  return peak * clock_scale;
}

// The share of the spec sheet's peak a training step's large GEMMs sustain, by generation and
// operand width, inside the ranges measured on each (docs/training-model.md, "Constants"):
// A100 BF16 0.59-0.75 of 312 TFLOP/s by size (SimuMax's A100 table); H800 FP8 0.30-0.78 of
// 1,979 by shape (DeepGEMM's table, M = 4096: 590-1,550 TFLOP/s); B200 BF16 median 0.48-0.52 and
// at most 0.65 of 2,250 over 514 shapes (SimuMax's B200 table). Within those ranges, each value
// is the one the published training set agrees with best, one per generation and width, never
// per row, model or source (docs/validation.md, "Training steps"). Narrower formats sit lower:
// the same bytes feed twice the math, and the scaling factors cost the kernels too.
double gemm_kernel_efficiency(const Accelerator& accelerator, MatmulPrecision precision) {
  using G = cost_model::GpuGeneration;
  // XLA keeps a TPU's matrix units busier than a GPU's tensor cores: MaxText's published v5p
  // runs reach 55-71% MFU with whole layers rematerialized, 73-95% of peak in hardware FLOPs.
  if (accelerator.tpu) return 0.85;
  const bool narrow = precision != MatmulPrecision::bf16;
  switch (accelerator.generation) {
    // Volta: no measured share was read for it here; taken as Ampere's.
    case G::volta:
    case G::ampere: return 0.72;
    // CDNA: no measured share was read for it here; taken as Hopper's.
    case G::hopper:
    case G::cdna2:
    case G::cdna3:
    case G::cdna4: return narrow ? 0.50 : 0.58;
    default: return precision == MatmulPrecision::nvfp4 ? 0.45 : (narrow ? 0.55 : 0.62);
  }
}

// Flash attention's share of the bf16 peak. FlashAttention-2 reaches 50-73% forward on A100
// (arXiv 2307.08691) and about 0.45 backward, but only 35% on H100 (arXiv 2407.08608, whose
// FlashAttention-3 reaches 75% forward non-causal, 0.6 causal, about 0.45 backward). On
// Blackwell the tensor cores doubled but the exponentials did not: softmax bounds the kernel
// until Blackwell Ultra doubled them.
AttentionEfficiency attention_kernel_efficiency(const Accelerator& accelerator,
                                                AttentionKernel kernel) {
  using G = cost_model::GpuGeneration;
  // TPUs: Pallas's flash ("splash") attention, taken as FlashAttention-2's share on A100.
  if (accelerator.tpu || accelerator.generation == G::ampere) return {0.55, 0.45};
  // Volta has no FlashAttention (1.x runs on Turing and Ampere, 2.x from Ampere on): V100 runs
  // xFormers' or PyTorch's memory-efficient kernel, or unfused attention. No measured share was
  // read for them here; taken as FlashAttention-2's on H100, the lowest the model uses.
  if (accelerator.generation == G::volta) return {0.35, 0.35};
  if (kernel == AttentionKernel::flash2) return {0.35, 0.35};
  if (accelerator.generation == G::hopper || accelerator.doubled_softmax_exponentials) {
    return {0.60, 0.45};
  }
  return {0.45, 0.35};
}

double memory_efficiency() { return cost_model::kDefaultMemoryEfficiency; }

std::string accelerator_family(const Accelerator& accelerator) {
  if (accelerator.tpu) return "tpu";
  return std::string(cost_model::generation_name(accelerator.generation));
}

std::optional<Accelerator> accelerator_from_description(std::string_view text) {
  const std::string lower = ascii_lowercase(text);
  for (const CatalogueEntry& entry : catalogue()) {
    const bool all = std::all_of(entry.words.begin(), entry.words.end(), [&](std::string_view w) {
      return lower.find(w) != std::string::npos;
    });
    const bool whole = std::all_of(entry.whole_words.begin(), entry.whole_words.end(),
                                   [&](std::string_view w) { return has_whole_word(lower, w); });
    if (!all || !whole) continue;
    Accelerator accelerator = entry.accelerator;
    accelerator.clock_scale = clock_scale_of(lower, accelerator.power_watts);
    return accelerator;
  }
  return std::nullopt;
}

namespace {

// Each GPU preset's standard part, as a description the catalogue reads (H100 SXM rather than
// the H800 or the 96 GB H100 that share its preset).
constexpr std::pair<std::string_view, std::string_view> kPresetParts[] = {
    {"dgx-1-v100", "V100 SXM2 32GB"}, {"dgx-2-v100", "V100 SXM3 32GB"},
    {"gb200-nvl72", "GB200"},         {"gb300-nvl72", "GB300"},
    {"gh200-quad", "GH200"},          {"hgx-a100", "A100 SXM 80GB"},
    {"hgx-b200", "B200"},             {"hgx-b300", "B300"},
    {"hgx-h100", "H100 SXM"},         {"hgx-h200", "H200 SXM"},
    {"mi250x", "MI250X"},             {"mi300x", "MI300X"},
    {"mi325x", "MI325X"},             {"mi350x", "MI350X"},
    {"mi355x", "MI355X"},             {"pcie-a100", "A100 PCIe 80GB"},
    {"pcie-h100", "H100 PCIe"},       {"pcie-h100-nvl", "H100 NVL"},
    {"pcie-v100", "V100 PCIe 32GB"}};

}  // namespace

std::optional<PresetAccelerator> accelerator_of_preset(std::string_view preset) {
  for (const auto& [name, description] : kPresetParts) {
    if (name != preset) continue;
    std::optional<Accelerator> accelerator = accelerator_from_description(description);
    if (!accelerator || accelerator->preset != preset) return std::nullopt;
    return PresetAccelerator{std::string(description), *accelerator};
  }
  return std::nullopt;
}

std::vector<std::string> accelerator_presets() {
  std::vector<std::string> presets;
  for (const auto& entry : kPresetParts) presets.emplace_back(entry.first);
  std::sort(presets.begin(), presets.end());
  return presets;
}

void require_precision(const Accelerator& accelerator, MatmulPrecision precision,
                       std::string_view where) {
  if (accelerator.peak_flops_per_s(precision) > 0) return;
  throw Error(fmt::format("{}: precision {}: {} has no {} tensor cores; expected {}", where,
                          precision_name(precision), accelerator.name, precision_name(precision),
                          accelerator.fp8_flops_per_s > 0 ? "bf16, fp16 or fp8" : "bf16 or fp16"));
}

}  // namespace spmd::training
