#pragma once
// SplitMix64 (Steele, Lea, Flood 2014): a tiny deterministic generator that gives the same
// numbers on every platform (unlike <random>'s distributions), for test data and examples.

#include <cstdint>

namespace spmd {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::int64_t in_range(std::int64_t lo, std::int64_t hi) {  // [lo, hi]
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  // Uniform in [low, high) from the top 24 bits, so the unit draw is exact in float.
  float uniform(float low, float high) {
    const float unit = static_cast<float>(next() >> 40) * 0x1.0p-24f;
    return low + (high - low) * unit;
  }

 private:
  std::uint64_t state_;
};

}  // namespace spmd
