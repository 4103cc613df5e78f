#pragma once
// One accelerator as the training model sees it (docs/training-model.md, "Accelerators"): its
// spec sheet's dense matmul peaks per precision, memory and memory bandwidth, its SMs (GEMM
// waves), the share of peak its large GEMMs and its attention kernels sustain, and the machine
// preset whose fabric times its collectives. Each figure names its source in accelerator.cc.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cost_model/fabric.h"
#include "training/precision.h"

namespace spmd::training {

struct Accelerator {
  std::string name;     // "H100 SXM"
  std::string preset;   // the machine preset whose fabric it sits in ("hgx-h100")
  cost_model::GpuGeneration generation = cost_model::GpuGeneration::hopper;
  // Dense tensor-core peaks, FLOP/s; 0 where the chip has no such format.
  double bf16_flops_per_s = 0;
  double fp8_flops_per_s = 0;
  double fp4_flops_per_s = 0;
  double memory_bytes = 0;
  double memory_bandwidth_bytes_per_s = 0;
  int streaming_multiprocessors = 0;
  // The output tile cuBLAS / CUTLASS kernels use for large GEMMs on this generation.
  int gemm_tile_rows = 128;
  int gemm_tile_columns = 256;
  double power_watts = 0;  // the board power the peaks are quoted at
  // Blackwell Ultra (B300, GB300) doubled the special-function units' exponentials, which bound
  // attention's softmax on Blackwell ("2x attention-layer acceleration").
  bool doubled_softmax_exponentials = false;
  // Clock scale of a part run below its rated power (1 at rated power).
  double clock_scale = 1;

  // A TPU: its chips sit on a torus of ICI links (2 or 3 dimensions, `torus_side` chips a
  // side in a slice's whole cubes or pod rows), each link `ici_link_bytes_per_s` one way; no
  // GPU fabric. Its "SMs" are its matrix units.
  bool tpu = false;
  int torus_dimensions = 0;
  int torus_side = 0;
  double ici_link_bytes_per_s = 0;

  double peak_flops_per_s(MatmulPrecision precision) const;
};

// "volta", "ampere", "hopper", "blackwell", "cdna2", ... (the GPU generation), or "tpu".
std::string accelerator_family(const Accelerator& accelerator);

// The share of a precision's peak a large GEMM sustains on this generation.
double gemm_kernel_efficiency(const Accelerator& accelerator, MatmulPrecision precision);

// Which flash-attention kernels the software runs: FlashAttention-2 (PyTorch's SDPA, written
// for Ampere) or the kernels written for the chip (cuDNN's fused attention in Transformer
// Engine, FlashAttention-3 on Hopper).
enum class AttentionKernel { flash2, native };
// The share of the bf16 peak causal attention sustains, forward and backward.
struct AttentionEfficiency {
  double forward = 0;
  double backward = 0;
};
AttentionEfficiency attention_kernel_efficiency(const Accelerator& accelerator,
                                                AttentionKernel kernel);
// The share of the memory bandwidth streaming kernels reach.
double memory_efficiency();

// The accelerator a description names ("H100-SXM5-80GB", "A100-SXM-40GB", "GB200",
// "H100-96GB-HBM2e (Grand Teton, 500W power limit)"): the model and memory from its words, and a
// stated power limit as a lower clock. std::nullopt for a chip the catalogue does not have.
std::optional<Accelerator> accelerator_from_description(std::string_view text);

// The GPU whose machine preset is `preset` ("hgx-h100": the H100 SXM), as the catalogue's
// plainest description of it names it; std::nullopt for a preset no GPU of the catalogue sits in.
struct PresetAccelerator {
  std::string description;  // "H100 SXM": what a `gpu` field would say
  Accelerator accelerator;
};
std::optional<PresetAccelerator> accelerator_of_preset(std::string_view preset);
// The presets accelerator_of_preset knows, sorted.
std::vector<std::string> accelerator_presets();

// spmd::Error when `precision` is not a format the accelerator's tensor cores run.
void require_precision(const Accelerator& accelerator, MatmulPrecision precision,
                       std::string_view where);

}  // namespace spmd::training
