#pragma once
// The time of one GEMM on one accelerator from its shape (docs/training-model.md, "GEMMs"):
// the kernel computes whole output tiles, in waves of one tile per SM, so an M x N output that
// does not fill its last tiles or its last wave wastes the rest of them (NVIDIA's "Matrix
// Multiplication Background" guide: tile and wave quantization); the math runs at the
// generation's sustained share of the precision's peak; and a GEMM too thin to reuse its
// operands is bound by memory instead.

#include "training/accelerator.h"
#include "training/precision.h"

namespace spmd::training {

struct GemmShape {
  double rows = 0;     // M: tokens
  double columns = 0;  // N: output features
  double depth = 0;    // K: input features
};

// The share of the SMs' tile slots a GEMM of that output size keeps busy, in (0, 1].
double wave_efficiency(const Accelerator& accelerator, double rows, double columns);

// Seconds for `count` GEMMs of `shape` in `precision` (a grouped GEMM's groups, or the same GEMM
// repeated). 0 for an empty shape.
double gemm_seconds(const Accelerator& accelerator, MatmulPrecision precision,
                    const GemmShape& shape, double count = 1);

}  // namespace spmd::training
