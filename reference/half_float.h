#pragma once
// IEEE binary16 (float16) and bfloat16 as 16-bit storage types. Conversions from float round to
// nearest, ties to even; NaN stays NaN (quiet); the bit manipulation is in half_float_bits.h,
// shared with the CUDA kernels. Arithmetic is done by the caller in float and rounded back, which
// is exact for one operation: float's 24-bit significand is at least 2p+2 for both formats
// (Figueroa), so double rounding cannot occur.

#include <cstdint>

namespace spmd {

struct Float16 {
  std::uint16_t bits = 0;
  static Float16 from_float(float value);
  float to_float() const;
  friend bool operator==(Float16 a, Float16 b) = default;  // bitwise
};

struct BFloat16 {
  std::uint16_t bits = 0;
  static BFloat16 from_float(float value);
  float to_float() const;
  friend bool operator==(BFloat16 a, BFloat16 b) = default;  // bitwise
};

}  // namespace spmd
