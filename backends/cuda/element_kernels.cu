#include "backends/cuda/element_kernels.h"

#include <type_traits>

#include "backends/cuda/cuda_check.h"
#include "reference/half_float_bits.h"
#include "reference/subnormal_bits.h"

namespace spmd::cuda {
namespace {

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

__device__ float widen(Float16 x) { return half_bits::float_from_float16(x.bits); }
__device__ float widen(BFloat16 x) { return half_bits::float_from_bfloat16(x.bits); }

template <class T>
__device__ T narrow(float value) {
  if constexpr (std::is_same_v<T, Float16>) return Float16{half_bits::float16_from_float(value)};
  else return BFloat16{half_bits::bfloat16_from_float(value)};
}

// spmd::arith::add: the intrinsics name the rounding, so no contraction or fast path can apply.
template <class T>
__device__ T add(T a, T b) {
  if constexpr (is_half_v<T>) {
    return narrow<T>(__fadd_rn(widen(a), widen(b)));
  } else if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else if constexpr (std::is_same_v<T, float>) {
    return __fadd_rn(a, b);
  } else {
    return __dadd_rn(a, b);
  }
}

// -inf / +inf: the identities of max / min for the floating types (NaN cannot occur in others).
template <class T>
__device__ T infinity(bool negative) {
  if constexpr (std::is_same_v<T, Float16>) {
    return Float16{static_cast<std::uint16_t>(negative ? 0xfc00u : 0x7c00u)};
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16{static_cast<std::uint16_t>(negative ? 0xff80u : 0x7f80u)};
  } else if constexpr (std::is_same_v<T, float>) {
    return __int_as_float(static_cast<int>(negative ? 0xff800000u : 0x7f800000u));
  } else if constexpr (std::is_same_v<T, double>) {
    return __longlong_as_double(
        static_cast<long long>(negative ? 0xfff0000000000000ull : 0x7ff0000000000000ull));
  } else {
    return T{};
  }
}

template <class T>
__device__ bool is_nan(T x) {
  if constexpr (is_half_v<T>) return isnan(widen(x));
  else if constexpr (std::is_floating_point_v<T>) return isnan(x);
  else return false;
}

// spmd::arith::max / min: std::max(acc, x) keeps acc unless acc < x; std::min(acc, x) keeps acc
// unless x < acc (ties keep acc). A NaN operand is dropped, and two NaNs give the identity, so
// NaN is dropped in every fold order.
template <class T>
__device__ T max_of(T acc, T x) {
  if (is_nan(x)) return is_nan(acc) ? infinity<T>(true) : acc;
  if (is_nan(acc)) return x;
  if constexpr (is_half_v<T>) return widen(acc) < widen(x) ? x : acc;
  else return acc < x ? x : acc;
}

template <class T>
__device__ T min_of(T acc, T x) {
  if (is_nan(x)) return is_nan(acc) ? infinity<T>(false) : acc;
  if (is_nan(acc)) return x;
  if constexpr (is_half_v<T>) return widen(x) < widen(acc) ? x : acc;
  else return x < acc ? x : acc;
}

// spmd::arith::flush_subnormal, from the same bits (reference/subnormal_bits.h): a float32,
// float64 or bfloat16 subnormal becomes a zero of its sign; float16 and the integers are kept.
template <class T>
__device__ T flush_subnormal(T x) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16{subnormal_bits::flushed_bfloat16(x.bits)};
  } else if constexpr (std::is_floating_point_v<T>) {
    return subnormal_bits::flushed(x);
  } else {
    return x;
  }
}

template <class T, ReduceOp Op>
__device__ T apply(T lhs, T rhs) {
  if constexpr (Op == ReduceOp::sum) return add(lhs, rhs);
  else if constexpr (Op == ReduceOp::max) return max_of(lhs, rhs);
  else return min_of(lhs, rhs);
}

// spmd::arith::flushing_if: with Flush, operands and result are flushed (XLA:CPU's DAZ + FTZ).
template <class T, ReduceOp Op, bool Flush>
__device__ T apply_flushing_if(T lhs, T rhs) {
  if constexpr (Flush) {
    return flush_subnormal(apply<T, Op>(flush_subnormal(lhs), flush_subnormal(rhs)));
  } else {
    return apply<T, Op>(lhs, rhs);
  }
}

template <class T, ReduceOp Op, bool Flush, bool ReceivedLeft>
__global__ void combine_kernel(T* work, const T* received, std::int64_t elements) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < elements; i += stride) {
    work[i] = ReceivedLeft ? apply_flushing_if<T, Op, Flush>(received[i], work[i])
                           : apply_flushing_if<T, Op, Flush>(work[i], received[i]);
  }
}

constexpr int kThreadsPerBlock = 256;
constexpr std::int64_t kMaxBlocks = 4096;  // grid-stride loop covers the rest

template <class T, ReduceOp Op, bool Flush>
void launch_typed(bool received_left, T* work, const T* received, std::int64_t elements,
                  cudaStream_t stream) {
  const std::int64_t wanted = (elements + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const auto blocks = static_cast<unsigned>(wanted < kMaxBlocks ? wanted : kMaxBlocks);
  if (received_left) {
    combine_kernel<T, Op, Flush, true>
        <<<blocks, kThreadsPerBlock, 0, stream>>>(work, received, elements);
  } else {
    combine_kernel<T, Op, Flush, false>
        <<<blocks, kThreadsPerBlock, 0, stream>>>(work, received, elements);
  }
}

template <class T, bool Flush>
void launch_for_op(ReduceOp op, bool received_left, T* work, const T* received,
                   std::int64_t elements, cudaStream_t stream) {
  switch (op) {
    case ReduceOp::sum:
      launch_typed<T, ReduceOp::sum, Flush>(received_left, work, received, elements, stream);
      break;
    case ReduceOp::max:
      launch_typed<T, ReduceOp::max, Flush>(received_left, work, received, elements, stream);
      break;
    case ReduceOp::min:
      launch_typed<T, ReduceOp::min, Flush>(received_left, work, received, elements, stream);
      break;
  }
}

}  // namespace

void launch_combine(DType dtype, ReduceOp op, bool received_left, bool flush_subnormals,
                    void* work, const void* received, std::int64_t elements,
                    cudaStream_t stream) {
  if (elements == 0) return;
  visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* w = static_cast<T*>(work);
    const T* r = static_cast<const T*>(received);
    if (flush_subnormals) launch_for_op<T, true>(op, received_left, w, r, elements, stream);
    else launch_for_op<T, false>(op, received_left, w, r, elements, stream);
  });
  check_cuda(cudaGetLastError(), "combine kernel launch");
}

}  // namespace spmd::cuda
