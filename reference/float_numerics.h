#pragma once
// How a platform's floating-point arithmetic departs from plain IEEE 754 (round to nearest even,
// gradual underflow, every operation rounded to its type). The reference and the simulator run
// with the numerics of the reduction order they model (ReductionOrder::numerics): XLA:CPU's for
// xla_cpu, plain IEEE for the GPU and MPI / Gloo orders. See docs/reduction-orders.md.

namespace spmd {

struct FloatNumerics {
  // float32, bfloat16 and float64 arithmetic reads subnormal operands as zeros of their sign and
  // flushes subnormal results to zeros of their sign (x86 MXCSR DAZ + FTZ, which XLA:CPU sets).
  // float16 is computed in float32, where its subnormals are normal numbers: it keeps them. Data
  // movement, neg and conversions keep the bits.
  bool flush_subnormals = false;
  // XLA's xla_allow_excess_precision: a bfloat16 add / sub / mul, computed in float32, skips its
  // rounding to bfloat16 when its one consumer computes in float32 as well (psum, pmean and
  // psum_scatter, which XLA:CPU promotes to float32, or a convert to float32).
  bool bf16_excess_precision = false;

  friend bool operator==(const FloatNumerics&, const FloatNumerics&) = default;
};

inline constexpr FloatNumerics kIeeeNumerics{};
inline constexpr FloatNumerics kXlaCpuNumerics{.flush_subnormals = true,
                                               .bf16_excess_precision = true};

}  // namespace spmd
