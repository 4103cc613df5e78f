#include "validation/nccl_type_names.h"

#include <array>
#include <utility>

#include "support/name_table.h"

namespace spmd {

std::string nccl_type_name(DType dtype) {
  switch (dtype) {
    case DType::float32: return "float";
    case DType::float64: return "double";
    case DType::float16: return "half";
    default: return std::string(dtype_name(dtype));
  }
}

namespace {

std::string first_word_lowercase(std::string_view text) {
  const std::string lower = ascii_lowercase(text);
  return lower.substr(0, lower.find_first_of(" \t(;,"));
}

std::optional<DType> dtype_of_word(std::string_view word) {
  for (DType dtype : kAllDTypes) {
    if (word == nccl_type_name(dtype) || word == dtype_name(dtype)) return dtype;
  }
  return std::nullopt;
}

}  // namespace

std::optional<DType> dtype_of_nccl_type(std::string_view text) {
  return dtype_of_word(first_word_lowercase(text));
}

std::optional<int> nccl_type_bytes(std::string_view text) {
  const std::string word = first_word_lowercase(text);
  if (const std::optional<DType> dtype = dtype_of_word(word)) {
    return static_cast<int>(dtype_size_bytes(*dtype));
  }
  static constexpr std::array<std::pair<std::string_view, int>, 10> kOthers = {{
      {"uint32", 4}, {"uint64", 8}, {"fp8_e4m3", 1}, {"fp8_e5m2", 1}, {"fp8", 1},
      {"fp32", 4}, {"fp16", 2}, {"bf16", 2}, {"int", 4}, {"char", 1},
  }};
  for (const auto& [name, bytes] : kOthers) {
    if (word == name) return bytes;
  }
  return std::nullopt;
}

}  // namespace spmd
