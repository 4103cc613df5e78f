#pragma once
// The number format a training step's matmuls run in, and what each costs beside the matmul
// (docs/training-model.md, "Precision"). Weights, gradients and optimizer states keep the
// frameworks' dtypes whatever the matmuls use: bf16 weights with fp32 master copies, Adam's
// moments in fp32.

#include <string_view>

namespace spmd::training {

enum class MatmulPrecision {
  bf16,     // also fp16: the same tensor-core rate
  fp8,      // per-tensor scaling (delayed or current) or DeepSeek's 128-element blocks
  mxfp8,    // OCP microscaling: 32-element blocks with an e8m0 scale (Blackwell)
  nvfp4,    // 16-element blocks with an fp8 scale (Blackwell)
};

std::string_view precision_name(MatmulPrecision precision);
// Bytes of one matmul operand element in this precision (scales ignored).
double operand_bytes(MatmulPrecision precision);
// Reads a description as published tables write it ("bf16", "fp8 (per-tensor current
// scaling)", "FP8-CS", "MXFP8", "nvfp4", "fp16 mixed", "bf16 activations/matmuls, fp32 weights"):
// the first word naming a format decides. spmd::Error listing the formats otherwise.
MatmulPrecision precision_from_description(std::string_view text);

}  // namespace spmd::training
