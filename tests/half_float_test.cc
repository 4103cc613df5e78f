// Float16 and BFloat16: conversion from float rounds to nearest, ties to even, with IEEE
// overflow (to infinity from the midpoint above the largest finite value) and subnormals; every
// 16-bit pattern survives to_float -> from_float. Reference values are computed here from the
// bit layouts, independently of half_float.cc.

#include "reference/half_float.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace spmd {
namespace {

constexpr std::uint16_t kSignBit = 0x8000;
constexpr std::uint16_t kFloat16Infinity = 0x7c00;
constexpr std::uint16_t kFloat16MaxFinite = 0x7bff;  // 65504
constexpr std::uint16_t kBFloat16Infinity = 0x7f80;
constexpr std::uint16_t kBFloat16MaxFinite = 0x7f7f;  // 3.3895314e38

bool is_float16_nan(std::uint16_t bits) { return (bits & 0x7c00) == 0x7c00 && (bits & 0x3ff) != 0; }
bool is_bfloat16_nan(std::uint16_t bits) { return (bits & 0x7f80) == 0x7f80 && (bits & 0x7f) != 0; }

// The value of a non-negative float16 pattern from the binary16 layout; the infinity pattern
// stands for 2^16, where IEEE's unbounded-exponent rounding would put the next value.
double float16_value(std::uint16_t bits) {
  const int exponent = bits >> 10;
  const int mantissa = bits & 0x3ff;
  if (exponent == 0) return std::ldexp(mantissa, -24);
  return std::ldexp(1024 + mantissa, exponent - 25);
}

// The same for bfloat16: the top half of a float; infinity stands for 2^128.
double bfloat16_value(std::uint16_t bits) {
  if (bits == kBFloat16Infinity) return std::ldexp(1.0, 128);
  return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16));
}

// Nearest, ties to even, among the non-negative patterns 0..infinity of a format whose values
// `value_of` gives (increasing with the pattern). Differences are exact in double: the
// neighbours are within a factor of two of |x| or zero.
template <class ValueOf>
std::uint16_t reference_round(float x, std::uint16_t infinity, ValueOf value_of) {
  const double magnitude = std::fabs(static_cast<double>(x));
  const std::uint16_t sign = std::signbit(x) ? kSignBit : 0;
  if (magnitude >= value_of(infinity)) return static_cast<std::uint16_t>(sign | infinity);
  std::uint16_t low = 0, high = infinity;  // value_of(low) <= magnitude < value_of(high)
  while (high - low > 1) {
    const auto middle = static_cast<std::uint16_t>((low + high) / 2);
    (value_of(middle) <= magnitude ? low : high) = middle;
  }
  const double below = magnitude - value_of(low);
  const double above = value_of(high) - magnitude;
  std::uint16_t nearest = below < above ? low : high;
  if (below == above) nearest = (low % 2 == 0) ? low : high;
  return static_cast<std::uint16_t>(sign | nearest);
}

std::uint16_t reference_float16(float x) {
  return reference_round(x, kFloat16Infinity, float16_value);
}
std::uint16_t reference_bfloat16(float x) {
  return reference_round(x, kBFloat16Infinity, bfloat16_value);
}

float from_bits(std::uint32_t bits) { return std::bit_cast<float>(bits); }

// ---- Float16 ----------------------------------------------------------------------------------

TEST(half, Float16KnownValues) {
  EXPECT_EQ(Float16{0x3c00}.to_float(), 1.0f);
  EXPECT_EQ(Float16{0xc000}.to_float(), -2.0f);
  EXPECT_EQ(Float16{kFloat16MaxFinite}.to_float(), 65504.0f);
  EXPECT_EQ(Float16{0x0400}.to_float(), 0x1p-14f);  // smallest normal
  EXPECT_EQ(Float16{0x0001}.to_float(), 0x1p-24f);  // smallest subnormal
  EXPECT_EQ(Float16{0x03ff}.to_float(), 1023 * 0x1p-24f);
  EXPECT_EQ(Float16{0x8001}.to_float(), -0x1p-24f);
  EXPECT_EQ(Float16{kFloat16Infinity}.to_float(), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::signbit(Float16{0x8000}.to_float()));
  EXPECT_EQ(Float16::from_float(0.1f).bits, 0x2e66);  // np.float16(0.1).view(np.uint16) == 11878
}

TEST(half, Float16EveryPatternRoundTripsThroughFloat) {
  for (std::uint32_t pattern = 0; pattern <= 0xffff; ++pattern) {
    const Float16 half{static_cast<std::uint16_t>(pattern)};
    const float wide = half.to_float();
    const Float16 back = Float16::from_float(wide);
    if (is_float16_nan(half.bits)) {
      EXPECT_TRUE(std::isnan(wide)) << std::hex << pattern;
      EXPECT_TRUE(is_float16_nan(back.bits)) << std::hex << pattern;
      EXPECT_EQ(back.bits & 0x0200, 0x0200) << "quiet bit, pattern " << std::hex << pattern;
      EXPECT_EQ(back.bits & kSignBit, half.bits & kSignBit) << std::hex << pattern;
    } else {
      EXPECT_EQ(back.bits, half.bits) << std::hex << pattern;
      if (pattern < kFloat16Infinity) {
        EXPECT_EQ(static_cast<double>(wide), float16_value(half.bits)) << std::hex << pattern;
      }
    }
  }
}

// The midpoint between two neighbouring halves (exact in float: 12 significant bits) goes to
// the one with the even pattern; a float ulp either side goes to the nearer one.
TEST(half, Float16MidpointsRoundToEven) {
  for (std::uint16_t low = 0; low <= kFloat16MaxFinite; ++low) {
    const auto high = static_cast<std::uint16_t>(low + 1);
    const auto midpoint = static_cast<float>((float16_value(low) + float16_value(high)) / 2);
    const std::uint16_t even = (low % 2 == 0) ? low : high;
    EXPECT_EQ(Float16::from_float(midpoint).bits, even) << std::hex << low;
    EXPECT_EQ(Float16::from_float(-midpoint).bits, kSignBit | even) << std::hex << low;
    EXPECT_EQ(Float16::from_float(std::nextafter(midpoint, 0.0f)).bits, low) << std::hex << low;
    EXPECT_EQ(Float16::from_float(std::nextafter(midpoint, INFINITY)).bits, high)
        << std::hex << low;
  }
}

TEST(half, Float16Overflow) {
  // 65520 is the midpoint between 65504 and 2^16; ties to even round it to 2^16, i.e. inf
  // (np.float16(65520.0) == inf, np.float16(65519.99) == 65504).
  EXPECT_EQ(Float16::from_float(65520.0f).bits, kFloat16Infinity);
  EXPECT_EQ(Float16::from_float(65519.99f).bits, kFloat16MaxFinite);
  EXPECT_EQ(Float16::from_float(std::nextafter(65520.0f, 0.0f)).bits, kFloat16MaxFinite);
  EXPECT_EQ(Float16::from_float(-65520.0f).bits, kSignBit | kFloat16Infinity);
  EXPECT_EQ(Float16::from_float(1e10f).bits, kFloat16Infinity);
  EXPECT_EQ(Float16::from_float(std::numeric_limits<float>::max()).bits, kFloat16Infinity);
  EXPECT_EQ(Float16::from_float(INFINITY).bits, kFloat16Infinity);
  EXPECT_EQ(Float16::from_float(-INFINITY).bits, kSignBit | kFloat16Infinity);
}

TEST(half, Float16Subnormals) {
  EXPECT_EQ(Float16::from_float(0x1p-24f).bits, 0x0001);
  EXPECT_EQ(Float16::from_float(0x1p-25f).bits, 0x0000);  // tie between 0 and 2^-24: even is 0
  EXPECT_EQ(Float16::from_float(std::nextafter(0x1p-25f, 1.0f)).bits, 0x0001);
  EXPECT_EQ(Float16::from_float(3 * 0x1p-25f).bits, 0x0002);  // tie between 1 and 2 ulps
  EXPECT_EQ(Float16::from_float(5 * 0x1p-25f).bits, 0x0002);  // tie between 2 and 3 ulps
  EXPECT_EQ(Float16::from_float(0x1p-26f).bits, 0x0000);
  EXPECT_EQ(Float16::from_float(-0x1p-26f).bits, kSignBit);  // underflow keeps the sign
  EXPECT_EQ(Float16::from_float(std::numeric_limits<float>::denorm_min()).bits, 0x0000);
  EXPECT_EQ(Float16::from_float(0x1p-14f - 0x1p-25f).bits,
            0x0400);  // tie up to the smallest normal
  EXPECT_EQ(Float16::from_float(1023 * 0x1p-24f).bits, 0x03ff);
  EXPECT_EQ(Float16::from_float(-0.0f).bits, kSignBit);
}

TEST(half, Float16NaNStaysQuietNaNWithSign) {
  for (std::uint32_t bits : {0x7fc00000u, 0x7f800001u, 0xffc00000u, 0x7fffffffu, 0x7f802000u}) {
    const Float16 half = Float16::from_float(from_bits(bits));
    EXPECT_TRUE(is_float16_nan(half.bits)) << std::hex << bits;
    EXPECT_EQ(half.bits & 0x0200, 0x0200) << std::hex << bits;
    EXPECT_EQ((half.bits & kSignBit) != 0, (bits >> 31) != 0) << std::hex << bits;
  }
}

// ---- BFloat16 ---------------------------------------------------------------------------------

TEST(half, BFloat16KnownValues) {
  EXPECT_EQ(BFloat16{0x3f80}.to_float(), 1.0f);
  EXPECT_EQ(BFloat16{0xc020}.to_float(), -2.5f);
  EXPECT_EQ(BFloat16{kBFloat16MaxFinite}.to_float(), 0x1.fep127f);
  EXPECT_EQ(BFloat16{0x0001}.to_float(), 0x1p-133f);   // smallest subnormal
  EXPECT_EQ(BFloat16::from_float(0.1f).bits, 0x3dcd);  // 0.1f = 0x3dcccccd rounds up
}

TEST(half, BFloat16EveryPatternRoundTripsThroughFloat) {
  for (std::uint32_t pattern = 0; pattern <= 0xffff; ++pattern) {
    const BFloat16 half{static_cast<std::uint16_t>(pattern)};
    const BFloat16 back = BFloat16::from_float(half.to_float());
    if (is_bfloat16_nan(half.bits)) {
      EXPECT_TRUE(is_bfloat16_nan(back.bits)) << std::hex << pattern;
      EXPECT_EQ(back.bits & 0x0040, 0x0040) << "quiet bit, pattern " << std::hex << pattern;
      EXPECT_EQ(back.bits & kSignBit, half.bits & kSignBit) << std::hex << pattern;
    } else {
      EXPECT_EQ(back.bits, half.bits) << std::hex << pattern;
    }
  }
}

TEST(half, BFloat16MidpointsRoundToEven) {
  for (std::uint16_t low = 0; low <= kBFloat16MaxFinite; ++low) {
    // The midpoint of two neighbouring bfloat16 values is the float with 0x8000 below them.
    const float midpoint = from_bits((static_cast<std::uint32_t>(low) << 16) | 0x8000u);
    const auto high = static_cast<std::uint16_t>(low + 1);
    const std::uint16_t even = (low % 2 == 0) ? low : high;
    EXPECT_EQ(BFloat16::from_float(midpoint).bits, even) << std::hex << low;
    EXPECT_EQ(BFloat16::from_float(-midpoint).bits, kSignBit | even) << std::hex << low;
    EXPECT_EQ(BFloat16::from_float(std::nextafter(midpoint, 0.0f)).bits, low) << std::hex << low;
    EXPECT_EQ(BFloat16::from_float(std::nextafter(midpoint, INFINITY)).bits, high)
        << std::hex << low;
  }
}

TEST(half, BFloat16OverflowAndSubnormals) {
  EXPECT_EQ(BFloat16::from_float(std::numeric_limits<float>::max()).bits, kBFloat16Infinity);
  EXPECT_EQ(BFloat16::from_float(from_bits(0x7f7f7fffu)).bits, kBFloat16MaxFinite);
  EXPECT_EQ(BFloat16::from_float(from_bits(0x7f7f8000u)).bits, kBFloat16Infinity);  // tie up
  EXPECT_EQ(BFloat16::from_float(-INFINITY).bits, kSignBit | kBFloat16Infinity);
  // Float subnormals below bfloat16's smallest subnormal (2^-133) round like any other value.
  EXPECT_EQ(BFloat16::from_float(0x1p-134f).bits, 0x0000);  // tie between 0 and 2^-133
  EXPECT_EQ(BFloat16::from_float(3 * 0x1p-134f).bits, 0x0002);
  EXPECT_EQ(BFloat16::from_float(std::numeric_limits<float>::denorm_min()).bits, 0x0000);
  EXPECT_EQ(BFloat16::from_float(-0x1p-133f).bits, kSignBit | 0x0001);
}

TEST(half, BFloat16NaNStaysQuietNaNWithSign) {
  // 0x7f800001 would become infinity if its payload were simply truncated.
  for (std::uint32_t bits : {0x7fc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu}) {
    const BFloat16 half = BFloat16::from_float(from_bits(bits));
    EXPECT_TRUE(is_bfloat16_nan(half.bits)) << std::hex << bits;
    EXPECT_EQ((half.bits & kSignBit) != 0, (bits >> 31) != 0) << std::hex << bits;
  }
}

// ---- Properties: from_float is the nearest value, ties to even --------------------------------

// Floats spread over the whole float16 range (exponents of 2^-27 .. 2^16) rather than uniformly
// over all bit patterns, most of which are far outside it.
rc::Gen<float> floats_near_float16_range() {
  return rc::gen::map(
      rc::gen::tuple(rc::gen::arbitrary<bool>(), rc::gen::inRange<std::uint32_t>(100, 144),
                     rc::gen::inRange<std::uint32_t>(0, 1u << 23)),
      [](const std::tuple<bool, std::uint32_t, std::uint32_t>& parts) {
        const auto [negative, exponent, mantissa] = parts;
        return from_bits((negative ? 0x80000000u : 0u) | (exponent << 23) | mantissa);
      });
}

// Midpoints between neighbouring halves, nudged by at most 2 float ulps: the tie cases.
rc::Gen<float> floats_near_float16_midpoints() {
  return rc::gen::map(
      rc::gen::tuple(rc::gen::inRange<std::uint16_t>(0, kFloat16MaxFinite + 1),
                     rc::gen::inRange(-2, 3)),
      [](const std::tuple<std::uint16_t, int>& parts) {
        const auto [low, nudge] = parts;
        const double midpoint = (float16_value(low) + float16_value(low + 1)) / 2;
        return from_bits(static_cast<std::uint32_t>(
            static_cast<int>(std::bit_cast<std::uint32_t>(static_cast<float>(midpoint))) + nudge));
      });
}

RC_GTEST_PROP(half, Float16FromFloatIsNearestTiesToEvenOverAllFloats, (std::uint32_t bits)) {
  const float x = from_bits(bits);
  RC_PRE(!std::isnan(x));
  RC_ASSERT(Float16::from_float(x).bits == reference_float16(x));
}

RC_GTEST_PROP(half, Float16FromFloatIsNearestTiesToEvenInRange, ()) {
  const float x = *floats_near_float16_range();
  RC_ASSERT(Float16::from_float(x).bits == reference_float16(x));
}

RC_GTEST_PROP(half, Float16FromFloatIsNearestTiesToEvenNearMidpoints, ()) {
  const float x = *floats_near_float16_midpoints();
  RC_ASSERT(Float16::from_float(x).bits == reference_float16(x));
}

RC_GTEST_PROP(half, BFloat16FromFloatIsNearestTiesToEvenOverAllFloats, (std::uint32_t bits)) {
  const float x = from_bits(bits);
  RC_PRE(!std::isnan(x));
  RC_ASSERT(BFloat16::from_float(x).bits == reference_bfloat16(x));
}

RC_GTEST_PROP(half, BFloat16FromFloatIsNearestTiesToEvenNearMidpoints,
              (std::uint16_t low, std::int8_t nudge)) {
  RC_PRE((low & 0x7fff) < kBFloat16MaxFinite);
  const std::uint32_t midpoint = (static_cast<std::uint32_t>(low) << 16) | 0x8000u;
  const float x =
      from_bits(static_cast<std::uint32_t>(static_cast<std::int64_t>(midpoint) + nudge % 3));
  RC_ASSERT(BFloat16::from_float(x).bits == reference_bfloat16(x));
}

}  // namespace
}  // namespace spmd
