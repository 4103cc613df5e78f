#include "backends/differential/differential_data.h"

#include <cstring>
#include <functional>
#include <sstream>
#include <string_view>

#include "support/random_array.h"

namespace spmd::differential {

Array contribution(DType dtype, std::int64_t count, std::uint64_t seed, int rank) {
  // Device `rank`'s seed in random_per_device, so the property tests' data and these agree.
  return random_array(dtype, {count}, device_seed(seed, rank));
}

std::vector<Array> contributions(DType dtype, std::int64_t count, std::uint64_t seed, int ranks) {
  std::vector<Array> arrays;
  for (int r = 0; r < ranks; ++r) arrays.push_back(contribution(dtype, count, seed, r));
  return arrays;
}

std::vector<std::int64_t> element_counts(int ranks) {
  std::vector<std::int64_t> counts;
  for (int count = 1; count <= ranks; ++count) counts.push_back(count);
  for (std::int64_t count : {7, 1000, 100003}) {
    if (count > ranks) counts.push_back(count);
  }
  counts.push_back(kLargestCount);
  return counts;
}

std::uint64_t bits_digest(const Array& array) {
  const std::span<const std::byte> bytes = array.bytes();
  const std::size_t of_bits = std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  const std::size_t of_type = std::hash<std::string>{}(array.type_string());
  return of_bits ^ (of_type + 0x9e3779b97f4a7c15 + (of_bits << 6) + (of_bits >> 2));
}

std::string bitwise_difference(const Array& actual, const Array& expected) {
  if (actual.type_string() != expected.type_string()) {
    return "got " + actual.type_string() + ", expected " + expected.type_string();
  }
  const std::size_t element_bytes = dtype_size_bytes(actual.dtype());
  const auto a = actual.bytes();
  const auto e = expected.bytes();
  for (std::int64_t i = 0; i < actual.size(); ++i) {
    const std::size_t offset = static_cast<std::size_t>(i) * element_bytes;
    if (std::memcmp(a.data() + offset, e.data() + offset, element_bytes) != 0) {
      std::ostringstream line;
      line.precision(17);
      line << "element " << i << " of " << actual.size() << ": got " << actual.element_as_double(i)
           << ", expected " << expected.element_as_double(i);
      return line.str();
    }
  }
  return "";
}

}  // namespace spmd::differential
