#pragma once
// The bit-level conversions behind Float16 and BFloat16 (half_float.h), written once for the CPU
// and for CUDA kernels (backends/cuda), so that both round every float16 / bfloat16 operation
// identically: round to nearest, ties to even; NaN stays NaN (quiet, top of the payload kept).
// Plain C++ for g++; __host__ __device__ under nvcc.

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define SPMD_HOST_DEVICE __host__ __device__
#else
#define SPMD_HOST_DEVICE
#endif

namespace spmd::half_bits {

SPMD_HOST_DEVICE inline std::uint32_t bits_of(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

SPMD_HOST_DEVICE inline float float_of(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

SPMD_HOST_DEVICE inline std::uint16_t bfloat16_from_float(float value) {
  std::uint32_t bits = bits_of(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep sign and top payload, force quiet
    return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  }
  const std::uint32_t lsb = (bits >> 16) & 1u;
  bits += 0x7fffu + lsb;  // round to nearest, ties to even
  return static_cast<std::uint16_t>(bits >> 16);
}

SPMD_HOST_DEVICE inline float float_from_bfloat16(std::uint16_t bits) {
  return float_of(static_cast<std::uint32_t>(bits) << 16);
}

SPMD_HOST_DEVICE inline std::uint16_t float16_from_float(float value) {
  const std::uint32_t f = bits_of(value);
  const auto sign = static_cast<std::uint16_t>((f >> 16) & 0x8000u);
  const std::uint32_t abs = f & 0x7fffffffu;
  if (abs > 0x7f800000u) {  // NaN: quiet, keep the top of the payload
    return static_cast<std::uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  }
  if (abs >= 0x477ff000u) {  // rounds to >= 65520: overflow to infinity
    return static_cast<std::uint16_t>(sign | 0x7c00u);
  }
  if (abs < 0x38800000u) {  // below 2^-14: subnormal half (or zero)
    // Scale so that the half subnormal's ulp (2^-24) becomes 1, then round to nearest even.
    const int exponent = static_cast<int>(abs >> 23);
    if (exponent < 102) return sign;  // below 2^-25: rounds to zero
    const std::uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const int shift = 126 - exponent;  // 14..24 for exponents 112..102
    const std::uint32_t halfway = 1u << (shift - 1);
    const std::uint32_t remainder = mantissa & ((1u << shift) - 1u);
    std::uint32_t result = mantissa >> shift;
    if (remainder > halfway || (remainder == halfway && (result & 1u))) ++result;
    return static_cast<std::uint16_t>(sign | result);
  }
  // Normal: rebias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits.
  std::uint32_t rebased = abs - ((127u - 15u) << 23);
  const std::uint32_t lsb = (rebased >> 13) & 1u;
  rebased += 0xfffu + lsb;
  return static_cast<std::uint16_t>(sign | (rebased >> 13));
}

SPMD_HOST_DEVICE inline float float_from_float16(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = bits & 0x3ffu;
  std::uint32_t f;
  if (exponent == 0x1f) {
    f = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    f = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    f = sign;
  } else {  // subnormal: value = mantissa * 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  return float_of(f);
}

}  // namespace spmd::half_bits
