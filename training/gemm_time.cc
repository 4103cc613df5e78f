#include "training/gemm_time.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace spmd::training {

namespace {

double wave_efficiency_with_tile(double sms, double rows, double columns, double tile_rows,
                                 double tile_columns) {
  const double tiles = std::ceil(rows / tile_rows) * std::ceil(columns / tile_columns);
  const double waves = std::ceil(tiles / sms);
  const double useful_tiles = rows * columns / (tile_rows * tile_columns);
  return std::clamp(useful_tiles / (waves * sms), 1e-6, 1.0);
}

}  // namespace

double wave_efficiency(const Accelerator& accelerator, double rows, double columns) {
  // cuBLAS's heuristics pick a smaller tile where the large one leaves SMs idle: the large
  // tile, and halving either side of it down to a quarter of its area.
  const double sms = accelerator.streaming_multiprocessors;
  const double tile_rows = accelerator.gemm_tile_rows;
  const double tile_columns = accelerator.gemm_tile_columns;
  double best = 0;
  for (const auto& [r, c] : {std::pair{tile_rows, tile_columns}, {tile_rows / 2, tile_columns},
                             {tile_rows, tile_columns / 2}, {tile_rows / 2, tile_columns / 2}}) {
    best = std::max(best, wave_efficiency_with_tile(sms, rows, columns, r, c));
  }
  return best;
}

double gemm_seconds(const Accelerator& accelerator, MatmulPrecision precision,
                    const GemmShape& shape, double count) {
  if (shape.rows <= 0 || shape.columns <= 0 || shape.depth <= 0 || count <= 0) return 0;
  const double flops = 2 * shape.rows * shape.columns * shape.depth;
  const double math_rate = accelerator.peak_flops_per_s(precision) *
                           gemm_kernel_efficiency(accelerator, precision) *
                           wave_efficiency(accelerator, shape.rows, shape.columns);
  const double math_s = flops / math_rate;
  // Operands in the matmul's format, the output in bf16.
  const double bytes = (shape.rows * shape.depth + shape.depth * shape.columns) *
                           operand_bytes(precision) +
                       2 * shape.rows * shape.columns;
  const double memory_s =
      bytes / (accelerator.memory_bandwidth_bytes_per_s * memory_efficiency());
  return count * std::max(math_s, memory_s);
}

}  // namespace spmd::training
