#pragma once
// A subnormal becomes a zero of its sign, read from the bits: XLA:CPU's DAZ + FTZ
// (FloatNumerics::flush_subnormals) for float32, float64 and bfloat16, whose exponent range is
// float32's. Written once for the CPU (arith::flush_subnormal) and for CUDA kernels
// (backends/cuda), as half_float_bits.h is, so that both flush the same values.

#include <cstdint>
#include <cstring>

#include "reference/half_float_bits.h"  // SPMD_HOST_DEVICE

namespace spmd::subnormal_bits {

SPMD_HOST_DEVICE inline std::uint16_t flushed_bfloat16(std::uint16_t bits) {
  const bool subnormal = (bits & 0x7f80u) == 0 && (bits & 0x007fu) != 0;
  return subnormal ? static_cast<std::uint16_t>(bits & 0x8000u) : bits;
}

SPMD_HOST_DEVICE inline float flushed(float value) {
  const std::uint32_t bits = half_bits::bits_of(value);
  const bool subnormal = (bits & 0x7f800000u) == 0 && (bits & 0x007fffffu) != 0;
  return subnormal ? half_bits::float_of(bits & 0x80000000u) : value;
}

SPMD_HOST_DEVICE inline double flushed(double value) {
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7ff0000000000000ull) != 0 || (bits & 0x000fffffffffffffull) == 0) return value;
  bits &= 0x8000000000000000ull;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

}  // namespace spmd::subnormal_bits
