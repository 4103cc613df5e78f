// Seeded test and benchmark data (support/random_array.h): the same seed gives the same bits on
// every machine and at every array length, the values have the promised form, and the vectorized
// float32 loop gives what the element-by-element loop gives.

#include "support/random_array.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "reference/error.h"

namespace spmd {
namespace {

std::vector<std::uint32_t> float32_bits(const Array& a) {
  std::vector<std::uint32_t> bits;
  for (const float v : a.values<float>()) bits.push_back(std::bit_cast<std::uint32_t>(v));
  return bits;
}

TEST(RandomArray, seed_1_gives_these_bits_everywhere) {
  // The values this generator printed for seed 1 (x86-64, GCC 12, AVX2); any machine, compiler
  // or vector width must print the same, or seeds in bug reports stop reproducing.
  EXPECT_EQ(float32_bits(random_array(DType::float32, {6}, 1)),
            (std::vector<std::uint32_t>{0xc4959837, 0xb82dddec, 0x3f6dd637, 0x4381db3d, 0xbc61ef0c,
                                        0x372b24c0}));
  const Array f64 = random_array(DType::float64, {3}, 1);
  EXPECT_EQ(f64.values<double>()[0], -1382.054299524596);
  EXPECT_EQ(f64.values<double>()[2], 0.43239972924210091);
  EXPECT_EQ(random_array(DType::int64, {2}, 1).values<std::int64_t>()[1],
            std::int64_t{-1933320244349344983});
}

TEST(RandomArray, an_element_depends_on_the_seed_and_its_index_alone) {
  const std::vector<std::uint32_t> long_array = float32_bits(random_array(DType::float32, {1000}, 5));
  const std::vector<std::uint32_t> prefix = float32_bits(random_array(DType::float32, {37}, 5));
  EXPECT_EQ(prefix, std::vector<std::uint32_t>(long_array.begin(), long_array.begin() + 37));
  EXPECT_NE(prefix, float32_bits(random_array(DType::float32, {37}, 6)));
}

TEST(RandomArray, floats_are_exact_below_the_bound_with_one_zero_in_sixteen) {
  const std::int64_t count = 1 << 16;
  const Array a = random_array(DType::float32, {count}, 9, {.zero_in = 16, .max_exponent = 0});
  int negative_zeros = 0;
  int exponents_seen[64] = {};
  for (const float v : a.values<float>()) {
    ASSERT_LT(std::fabs(v), 1.0f);
    if (v == 0 && std::signbit(v)) ++negative_zeros;
    if (v != 0) {
      int exponent;
      std::frexp(v, &exponent);
      ++exponents_seen[std::min(63, 40 + exponent)];
    }
  }
  // 1/16 of 65,536 is 4,096; six standard deviations is about 370.
  EXPECT_NEAR(negative_zeros, count / 16, 370);
  // k spreads over [-12, 0]: values from below 2^-12 to just below 1.
  EXPECT_GT(exponents_seen[40 + 0], 0);
  EXPECT_GT(exponents_seen[40 - 12], 0);
}

TEST(RandomArray, the_vectorized_float32_loop_gives_the_element_by_element_values) {
  // With special_in > 0 every float32 element goes through the scalar loop; where it draws no
  // special value its bits must be those of the vectorized loop (special_in = 0).
  const Array fast = random_array(DType::float32, {4099}, 3);
  const Array scalar = random_array(DType::float32, {4099}, 3, {.special_in = 65536});
  int compared = 0;
  for (std::size_t i = 0; i < fast.values<float>().size(); ++i) {
    const float s = scalar.values<float>()[i];
    if (std::isnan(s) || std::isinf(s)) continue;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(s), std::bit_cast<std::uint32_t>(fast.values<float>()[i]))
        << "element " << i;
    ++compared;
  }
  EXPECT_GT(compared, 4000);
}

TEST(RandomArray, half_floats_hold_the_float_values_exactly) {
  const Array h = random_array(DType::float16, {2000}, 4);
  const Array b = random_array(DType::bfloat16, {2000}, 4);
  for (std::size_t i = 0; i < 2000; ++i) {
    const float half = h.values<Float16>()[i].to_float();
    ASSERT_LT(std::fabs(half), 4096.0f);
    ASSERT_TRUE(std::isfinite(half));
    ASSERT_TRUE(std::isfinite(b.values<BFloat16>()[i].to_float()));
  }
}

TEST(RandomArray, options_out_of_range_are_errors) {
  EXPECT_THROW(random_array(DType::float32, {4}, 1, {.zero_in = 70000}), Error);
  EXPECT_THROW(random_array(DType::float32, {4}, 1, {.max_exponent = 16}), Error);
}

// perf's inputs: the same bits whether made whole or a range at a time where they are read.
TEST(RandomArray, a_lazy_array_has_the_bits_of_the_whole_one_in_any_range) {
  const std::vector<DType> dtypes = {DType::float32, DType::float64, DType::float16,
                                     DType::bfloat16, DType::int32,   DType::int64,
                                     DType::int8,    DType::uint8,   DType::bool_};
  for (const DType dtype : dtypes) {
    for (const RandomArrayOptions options :
         {RandomArrayOptions{}, RandomArrayOptions{.special_in = 8, .max_exponent = 0}}) {
      SCOPED_TRACE(dtype_name(dtype));
      const Array whole = random_array(dtype, {5000}, 11, options);
      const Array lazy = lazy_random_array(dtype, {5000}, 11, options);
      const ElementGenerator* generate = lazy.element_generator();
      ASSERT_NE(generate, nullptr);
      const std::size_t width = dtype_size_bytes(dtype);
      for (const auto& [first, count] : {std::pair<std::int64_t, std::int64_t>{0, 5000},
                                        {1, 17},
                                        {2047, 2050},
                                        {4999, 1}}) {
        std::vector<std::byte> range(static_cast<std::size_t>(count) * width);
        (*generate)(first, count, range.data());
        ASSERT_EQ(std::memcmp(range.data(), whole.bytes().data() + first * width, range.size()), 0)
            << "elements " << first << " to " << first + count;
      }
      EXPECT_TRUE(lazy.bitwise_equal(whole));  // made whole on this first read
    }
  }
  EXPECT_THROW(lazy_random_array(DType::float32, {4}, 1, {.max_exponent = 16}), Error);
}

TEST(RandomArray, a_range_across_the_first_block_boundary_is_its_two_parts) {
  // Element 2^32 starts the second block of keys: asked across it, the generator gives what it
  // gives for each side, and the second block is not the first again.
  const Array lazy = lazy_random_array(DType::float32, {std::int64_t{1} << 33}, 2);
  const ElementGenerator& generate = *lazy.element_generator();
  const std::int64_t boundary = std::int64_t{1} << 32;
  std::vector<float> across(8), below(4), above(4), start(4);
  generate(boundary - 4, 8, reinterpret_cast<std::byte*>(across.data()));
  generate(boundary - 4, 4, reinterpret_cast<std::byte*>(below.data()));
  generate(boundary, 4, reinterpret_cast<std::byte*>(above.data()));
  generate(0, 4, reinterpret_cast<std::byte*>(start.data()));
  std::vector<float> parts = below;
  parts.insert(parts.end(), above.begin(), above.end());
  EXPECT_EQ(float32_bits(Array::from_values<float>({8}, across)),
            float32_bits(Array::from_values<float>({8}, parts)));
  EXPECT_NE(float32_bits(Array::from_values<float>({4}, above)),
            float32_bits(Array::from_values<float>({4}, start)));
}

}  // namespace
}  // namespace spmd
