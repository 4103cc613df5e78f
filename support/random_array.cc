#include "support/random_array.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

#include "reference/error.h"
#include "support/split_mix64.h"

namespace spmd {
namespace {

// Every element is made from its own index, never from the elements before it: word w of element
// i is word_hash(key_w, i), with the keys drawn from SplitMix64 once per 2^32 elements. So the loop
// has no carried state and the compiler vectorizes it (the float32 loop runs at memory speed, as
// `spmdsim perf` with data needs: a 64 MiB input per device), and the bits of an element do not
// depend on the machine, the vector width or the array's length.
constexpr int kBlockBits = 32;

// A 32-bit integer hash (Chris Wellons' hash prospector, "lowbias32": its bias is below that of
// MurmurHash3's finalizer) of a Weyl sequence, as SplitMix64 hashes its own. 32-bit multiplies, so
// SSE2 and AVX2 run 4 and 8 of them at once (there is no 64-bit vector multiply before AVX-512).
inline std::uint32_t word_hash(std::uint32_t key, std::uint32_t index) {
  std::uint32_t x = key + index * 0x9E3779B9u;
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

// The keys of one block of 2^32 elements: word 0 (the sign and significand, or an integer's
// bits), word 1 (the exponent in its low 16 bits, the -0.0 draw in its high 16), word 2 (the
// special-value draw) and word 3 (float64's low significand bits, int64's low half).
struct BlockKeys {
  std::uint32_t word[4];
};

BlockKeys block_keys(std::uint64_t seed, std::uint64_t block) {
  SplitMix64 rng(seed * 0x2545F4914F6CDD1Dull + 1 + block * 0xD1B54A32D192ED03ull);
  BlockKeys keys;
  for (std::uint32_t& key : keys.word) key = static_cast<std::uint32_t>(rng.next() >> 32);
  return keys;
}

// A 16-bit draw d is "one in n" when d < ceil(2^16 / n): exactly 1/n for n a power of two, within
// 1/2^16 of it otherwise, with no division per element. 0 for n <= 0 (never).
std::uint32_t one_in_threshold(int n, const char* what) {
  if (n <= 0) return 0;
  if (n > 65536) {
    throw Error(fmt::format("random_array: {} must be at most 65536, got {}", what, n));
  }
  return (65536u + static_cast<std::uint32_t>(n) - 1) / static_cast<std::uint32_t>(n);
}

// What a float element needs besides its words, computed once per array.
struct FloatDraw {
  int significand_bits;              // p, the implicit bit included
  std::uint32_t exponent_count;      // k takes exponent_count values from -12 up
  std::uint32_t zero_threshold;      // one_in_threshold(zero_in)
  std::uint32_t special_threshold;   // one_in_threshold(special_in)
};

constexpr int kLowestExponent = -12;

// m * 2^(k - p) for p <= 24, in float32: |m| < 2^p and the power of two are exact in float, and
// so is their product (no rounding: p bits; no underflow: k - p >= -36), so float16 and bfloat16
// take it unchanged. Branch-free, so that the loop over elements vectorizes.
inline float small_float_value(std::uint32_t word0, std::uint32_t word1, const FloatDraw& draw) {
  const std::uint32_t magnitude = word0 & ((1u << draw.significand_bits) - 1);
  const std::uint32_t negative = word0 >> 31;
  const auto m = static_cast<std::int32_t>((magnitude ^ (0u - negative)) + negative);  // +-mag
  const std::int32_t k =
      kLowestExponent + static_cast<std::int32_t>(((word1 & 0xFFFFu) * draw.exponent_count) >> 16);
  const float scale = std::bit_cast<float>(static_cast<std::uint32_t>(k - draw.significand_bits + 127)
                                           << 23);
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(static_cast<float>(m) * scale);
  const std::uint32_t zero_mask = 0u - static_cast<std::uint32_t>((word1 >> 16) < draw.zero_threshold);
  return std::bit_cast<float>((bits & ~zero_mask) | (0x80000000u & zero_mask));  // -0.0
}

// The same for float64 (p = 53): 21 significand bits from word 0, 32 from word 3.
inline double float64_value(std::uint32_t word0, std::uint32_t word1, std::uint32_t word3,
                            const FloatDraw& draw) {
  if ((word1 >> 16) < draw.zero_threshold) return -0.0;
  const std::int64_t magnitude =
      static_cast<std::int64_t>((std::uint64_t{word0 & 0x1FFFFFu} << 32) | word3);
  const std::int32_t k =
      kLowestExponent + static_cast<std::int32_t>(((word1 & 0xFFFFu) * draw.exponent_count) >> 16);
  const double scale =
      std::bit_cast<double>(static_cast<std::uint64_t>(k - 53 + 1023) << 52);
  return static_cast<double>((word0 >> 31) != 0 ? -magnitude : magnitude) * scale;
}

// NaN, +inf or -inf when word 2's high half draws "one in special_in"; checked after -0.0.
template <class Float>
inline bool special_value(std::uint32_t word1, std::uint32_t word2, const FloatDraw& draw,
                          Float& value) {
  if ((word1 >> 16) < draw.zero_threshold || (word2 >> 16) >= draw.special_threshold) return false;
  const Float specials[] = {std::numeric_limits<Float>::quiet_NaN(),
                            std::numeric_limits<Float>::infinity(),
                            -std::numeric_limits<Float>::infinity()};
  value = specials[((word2 & 0xFFFFu) * 3) >> 16];
  return true;
}

// Elements [first, first + count) of one block of float32 elements without specials: the loop
// `spmdsim perf` spends its input time in. Inlined into a baseline (SSE2) and an AVX2 copy,
// chosen when the process runs; both give the same bits (integer arithmetic and exact float
// products only).
[[gnu::always_inline]] inline void fill_float32_block(float* out, std::uint32_t first,
                                                      std::uint64_t count, const BlockKeys& keys,
                                                      const FloatDraw& draw) {
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto index = static_cast<std::uint32_t>(first + i);
    out[i] = small_float_value(word_hash(keys.word[0], index), word_hash(keys.word[1], index), draw);
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
[[gnu::target("avx2")]] void fill_float32_block_avx2(float* out, std::uint32_t first,
                                                     std::uint64_t count, const BlockKeys& keys,
                                                     const FloatDraw& draw) {
  fill_float32_block(out, first, count, keys, draw);
}
#endif

void fill_float32_block_baseline(float* out, std::uint32_t first, std::uint64_t count,
                                 const BlockKeys& keys, const FloatDraw& draw) {
  fill_float32_block(out, first, count, keys, draw);
}

void fill_float32_block_fastest(float* out, std::uint32_t first, std::uint64_t count,
                                const BlockKeys& keys, const FloatDraw& draw) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  if (has_avx2) return fill_float32_block_avx2(out, first, count, keys, draw);
#endif
  fill_float32_block_baseline(out, first, count, keys, draw);
}

// Significand bits of each float dtype (the implicit bit included); 0 for the others.
int significand_bits(DType dtype) {
  switch (dtype) {
    case DType::float64: return 53;
    case DType::float32: return 24;
    case DType::float16: return 11;
    case DType::bfloat16: return 8;
    default: return 0;
  }
}

// Elements [first, first + count) of one block (first + count <= 2^32) to out[0, count).
template <class T>
void fill_block(T* out, std::uint32_t first, std::uint64_t count, const BlockKeys& keys,
                const FloatDraw& draw) {
  const auto word = [&keys, first](int w, std::uint64_t i) {
    return word_hash(keys.word[w], static_cast<std::uint32_t>(first + i));
  };
  if constexpr (std::is_same_v<T, bool>) {
    for (std::uint64_t i = 0; i < count; ++i) out[i] = (word(0, i) & 1) != 0;
  } else if constexpr (std::is_integral_v<T> && sizeof(T) == 8) {
    for (std::uint64_t i = 0; i < count; ++i) {
      out[i] = static_cast<T>((std::uint64_t{word(0, i)} << 32) | word(3, i));
    }
  } else if constexpr (std::is_integral_v<T>) {
    for (std::uint64_t i = 0; i < count; ++i) out[i] = static_cast<T>(word(0, i));
  } else if constexpr (std::is_same_v<T, float>) {
    if (draw.special_threshold == 0) return fill_float32_block_fastest(out, first, count, keys, draw);
    for (std::uint64_t i = 0; i < count; ++i) {
      if (!special_value(word(1, i), word(2, i), draw, out[i])) {
        out[i] = small_float_value(word(0, i), word(1, i), draw);
      }
    }
  } else if constexpr (std::is_same_v<T, double>) {
    for (std::uint64_t i = 0; i < count; ++i) {
      if (!special_value(word(1, i), word(2, i), draw, out[i])) {
        out[i] = float64_value(word(0, i), word(1, i), word(3, i), draw);
      }
    }
  } else {  // Float16, BFloat16: exact, the value has at most p significant bits
    for (std::uint64_t i = 0; i < count; ++i) {
      float value;
      if (!special_value(word(1, i), word(2, i), draw, value)) {
        value = small_float_value(word(0, i), word(1, i), draw);
      }
      out[i] = T::from_float(value);
    }
  }
}

// What the float dtypes draw from, checked once per array.
FloatDraw float_draw(DType dtype, const RandomArrayOptions& options) {
  if (options.max_exponent < kLowestExponent || options.max_exponent > 15) {
    // 15: a float16 value stays below 2^15 < 65504 (its largest); float32 and float64 could go
    // further, but no caller needs it.
    throw Error(fmt::format("random_array: max_exponent must be in [-12, 15], got {}",
                            options.max_exponent));
  }
  return FloatDraw{
      .significand_bits = significand_bits(dtype),
      .exponent_count = static_cast<std::uint32_t>(options.max_exponent - kLowestExponent + 1),
      .zero_threshold = one_in_threshold(options.zero_in, "zero_in"),
      .special_threshold = one_in_threshold(options.special_in, "special_in")};
}

// Elements [first, first + count) of the array `seed` draws, to `out`, block by block.
void fill_elements(DType dtype, std::uint64_t seed, const FloatDraw& draw, std::int64_t first,
                   std::int64_t count, std::byte* out) {
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* values = reinterpret_cast<T*>(out);
    constexpr std::uint64_t kBlockElements = std::uint64_t{1} << kBlockBits;
    const auto total = static_cast<std::uint64_t>(count);
    for (std::uint64_t done = 0; done < total;) {
      const std::uint64_t index = static_cast<std::uint64_t>(first) + done;
      const auto in_block = static_cast<std::uint32_t>(index);  // index mod 2^32
      const std::uint64_t length = std::min(total - done, kBlockElements - in_block);
      fill_block(values + done, in_block, length, block_keys(seed, index >> kBlockBits), draw);
      done += length;
    }
  });
}

}  // namespace

Array random_array(DType dtype, const Shape& shape, std::uint64_t seed,
                   RandomArrayOptions options) {
  const FloatDraw draw = float_draw(dtype, options);
  Array a(dtype, shape);
  fill_elements(dtype, seed, draw, 0, a.size(), a.mutable_bytes().data());
  return a;
}

Array lazy_random_array(DType dtype, const Shape& shape, std::uint64_t seed,
                        RandomArrayOptions options) {
  const FloatDraw draw = float_draw(dtype, options);
  return Array::generated(
      dtype, shape, [dtype, seed, draw](std::int64_t first, std::int64_t count, std::byte* out) {
        fill_elements(dtype, seed, draw, first, count, out);
      });
}

std::uint64_t device_seed(std::uint64_t seed, int device) {
  return seed + 0x9E37ull * static_cast<std::uint64_t>(device + 1);
}

namespace {

// One array per device, each made by `make` (random_array or lazy_random_array) from its seed.
template <typename MakeArray>
std::vector<Array> per_device(DType dtype, const Shape& shape, int devices, std::uint64_t seed,
                              RandomArrayOptions options, MakeArray make) {
  std::vector<Array> arrays;
  for (int d = 0; d < devices; ++d) {
    arrays.push_back(make(dtype, shape, device_seed(seed, d), options));
  }
  return arrays;
}

}  // namespace

std::vector<Array> random_per_device(DType dtype, const Shape& shape, int devices,
                                     std::uint64_t seed, RandomArrayOptions options) {
  return per_device(dtype, shape, devices, seed, options, random_array);
}

std::vector<Array> lazy_random_per_device(DType dtype, const Shape& shape, int devices,
                                          std::uint64_t seed, RandomArrayOptions options) {
  return per_device(dtype, shape, devices, seed, options, lazy_random_array);
}

}  // namespace spmd
