#include "reference/half_float.h"

#include <bit>
#include <cstring>

namespace spmd {

BFloat16 BFloat16::from_float(float value) {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep sign and top payload, force quiet
    return BFloat16{static_cast<std::uint16_t>((bits >> 16) | 0x0040u)};
  }
  const std::uint32_t lsb = (bits >> 16) & 1u;
  bits += 0x7fffu + lsb;  // round to nearest, ties to even
  return BFloat16{static_cast<std::uint16_t>(bits >> 16)};
}

float BFloat16::to_float() const {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

Float16 Float16::from_float(float value) {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((f >> 16) & 0x8000u);
  const std::uint32_t abs = f & 0x7fffffffu;
  if (abs > 0x7f800000u) {  // NaN: quiet, keep the top of the payload
    return Float16{static_cast<std::uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu))};
  }
  if (abs >= 0x477ff000u) {  // rounds to >= 65520: overflow to infinity
    return Float16{static_cast<std::uint16_t>(sign | 0x7c00u)};
  }
  if (abs < 0x38800000u) {  // below 2^-14: subnormal half (or zero)
    // Scale so that the half subnormal's ulp (2^-24) becomes 1, then round to nearest even.
    const int exponent = static_cast<int>(abs >> 23);
    if (exponent < 102) return Float16{sign};  // below 2^-25: rounds to zero
    const std::uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const int shift = 126 - exponent;  // 14..24 for exponents 112..102
    const std::uint32_t halfway = 1u << (shift - 1);
    const std::uint32_t remainder = mantissa & ((1u << shift) - 1u);
    std::uint32_t result = mantissa >> shift;
    if (remainder > halfway || (remainder == halfway && (result & 1u))) ++result;
    return Float16{static_cast<std::uint16_t>(sign | result)};
  }
  // Normal: rebias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits.
  std::uint32_t rebased = abs - ((127u - 15u) << 23);
  const std::uint32_t lsb = (rebased >> 13) & 1u;
  rebased += 0xfffu + lsb;
  return Float16{static_cast<std::uint16_t>(sign | (rebased >> 13))};
}

float Float16::to_float() const {
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
  return std::bit_cast<float>(f);
}

}  // namespace spmd
