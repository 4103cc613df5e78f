#pragma once
// The one arithmetic kernel of the CUDA backend: a reduce transfer applied to a destination's work
// buffer. Every element is computed as spmd::arith computes it on the CPU
// (reference/scalar_arithmetic.h): float32 / float64 one IEEE round-to-nearest operation (built
// with --fmad=false, no fast math, denormals kept unless flushed on request); float16 / bfloat16
// in float, rounded once by reference/half_float_bits.h; integers wrap; max / min as
// std::max(lhs, rhs) / std::min(lhs, rhs).

#include <cstdint>

#include <cuda_runtime.h>

#include "reference/dtype.h"
#include "reference/fold_reduce.h"

namespace spmd::cuda {

// work[i] = op(work[i], received[i]) for i in [0, elements), or op(received[i], work[i]) when
// `received_left`, enqueued on `stream`. Both pointers are device memory holding `dtype`. With
// `flush_subnormals` (FloatNumerics, XLA:CPU's), float32 / float64 / bfloat16 operands and results
// that are subnormal become zeros of their sign, as arith::flushing_if computes on the CPU.
void launch_combine(DType dtype, ReduceOp op, bool received_left, bool flush_subnormals,
                    void* work, const void* received, std::int64_t elements,
                    cudaStream_t stream);

}  // namespace spmd::cuda
