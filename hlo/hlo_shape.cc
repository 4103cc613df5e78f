#include "hlo/hlo_shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cctype>
#include <utility>

#include "reference/error.h"
#include "support/checked_math.h"

namespace spmd::hlo {
namespace {

// XLA's primitive types (xla_data.proto PrimitiveType) by their HLO text names, with their widths.
constexpr std::array<std::pair<std::string_view, int>, 31> kElementTypeBits = {{
    {"pred", 8},      {"s2", 2},        {"s4", 4},          {"s8", 8},         {"s16", 16},
    {"s32", 32},      {"s64", 64},      {"u2", 2},          {"u4", 4},         {"u8", 8},
    {"u16", 16},      {"u32", 32},      {"u64", 64},        {"f16", 16},       {"bf16", 16},
    {"f32", 32},      {"f64", 64},      {"c64", 64},        {"c128", 128},     {"f8e5m2", 8},
    {"f8e4m3fn", 8},  {"f8e4m3", 8},    {"f8e4m3b11fnuz", 8}, {"f8e5m2fnuz", 8}, {"f8e4m3fnuz", 8},
    {"f8e3m4", 8},    {"f8e8m0fnu", 8}, {"f4e2m1fn", 4},    {"token", 0},      {"opaque", 0},
    {"s1", 1},
}};

void skip_spaces(std::string_view& text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
}

[[noreturn]] void fail(std::string_view text, std::string_view expected) {
  throw Error(fmt::format("shape at '{}': expected {}", text.substr(0, 40), expected));
}

std::int64_t read_dimension(std::string_view& text) {
  if (text.starts_with("<=")) text.remove_prefix(2);  // a dynamic dimension: its bound
  std::int64_t value = 0;
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    value = checked_add(checked_multiply(value, 10, "an HLO dimension"), text[digits] - '0',
                        "an HLO dimension");
    ++digits;
  }
  if (digits == 0) fail(text, "a dimension size");
  text.remove_prefix(digits);
  return value;
}

// "{1,0}", "{1,0:T(8,128)}", "{}": skipped, braces balanced.
void skip_layout(std::string_view& text) {
  if (text.empty() || text.front() != '{') return;
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '{') ++depth;
    if (text[i] == '}' && --depth == 0) {
      text.remove_prefix(i + 1);
      return;
    }
  }
  fail(text, "a layout closed by '}'");
}

HloShape read_array(std::string_view& text) {
  HloShape shape;
  std::size_t name_end = 0;
  while (name_end < text.size() && (std::isalnum(static_cast<unsigned char>(text[name_end])) != 0)) {
    ++name_end;
  }
  shape.element_type = std::string(text.substr(0, name_end));
  if (!element_type_bits(shape.element_type)) fail(text, "an element type such as f32");
  text.remove_prefix(name_end);
  if (text.empty() || text.front() != '[') {
    if (shape.element_type == "token") return shape;  // "token[]" or a bare "token"
    fail(text, "'[' and the dimensions");
  }
  text.remove_prefix(1);
  while (!text.empty() && text.front() != ']') {
    shape.dims.push_back(read_dimension(text));
    if (!text.empty() && text.front() == ',') text.remove_prefix(1);
  }
  if (text.empty()) fail(text, "']' closing the dimensions");
  text.remove_prefix(1);
  skip_layout(text);
  return shape;
}

}  // namespace

std::optional<int> element_type_bits(std::string_view element_type) {
  for (const auto& [name, bits] : kElementTypeBits) {
    if (name == element_type) return bits;
  }
  return std::nullopt;
}

std::optional<DType> timing_dtype(std::string_view element_type) {
  if (element_type == "f64") return DType::float64;
  if (element_type == "f32") return DType::float32;
  if (element_type == "f16") return DType::float16;
  if (element_type == "bf16") return DType::bfloat16;
  if (element_type == "s64") return DType::int64;
  if (element_type == "s32") return DType::int32;
  if (element_type == "s8") return DType::int8;
  if (element_type == "u8") return DType::uint8;
  if (element_type == "pred") return DType::bool_;
  switch (element_type_bits(element_type).value_or(0)) {
    case 8: return DType::uint8;
    case 16: return DType::float16;
    case 32: return DType::int32;
    case 64: return DType::int64;
    default: return std::nullopt;
  }
}

std::int64_t HloShape::element_count() const {
  if (is_tuple) return 0;
  std::int64_t count = 1;
  for (std::int64_t d : dims) count = checked_multiply(count, d, "an HLO shape's elements");
  return count;
}

std::int64_t HloShape::bytes() const {
  if (is_tuple) {
    std::int64_t total = 0;
    for (const HloShape& element : elements) total = checked_add(total, element.bytes(), "bytes");
    return total;
  }
  const std::int64_t bits = element_type_bits(element_type).value_or(0);
  return (checked_multiply(element_count(), bits, "an HLO shape's bits") + 7) / 8;
}

std::vector<const HloShape*> HloShape::leaves() const {
  if (!is_tuple) return {this};
  std::vector<const HloShape*> result;
  for (const HloShape& element : elements) {
    for (const HloShape* leaf : element.leaves()) result.push_back(leaf);
  }
  return result;
}

std::string HloShape::to_string() const {
  if (!is_tuple) return fmt::format("{}[{}]", element_type, fmt::join(dims, ","));
  std::vector<std::string> parts;
  for (const HloShape& element : elements) parts.push_back(element.to_string());
  return fmt::format("({})", fmt::join(parts, ", "));
}

std::int64_t tuple_table_bytes(const HloShape& tuple) {
  return tuple.is_tuple ? 8 * static_cast<std::int64_t>(tuple.elements.size()) : 0;
}

HloShape read_hlo_shape(std::string_view& text) {
  skip_spaces(text);
  if (text.empty()) fail(text, "a shape");
  if (text.front() != '(') return read_array(text);
  text.remove_prefix(1);
  HloShape tuple;
  tuple.is_tuple = true;
  skip_spaces(text);
  while (!text.empty() && text.front() != ')') {
    tuple.elements.push_back(read_hlo_shape(text));
    skip_spaces(text);
    if (!text.empty() && text.front() == ',') text.remove_prefix(1);
    skip_spaces(text);
  }
  if (text.empty()) fail(text, "')' closing the tuple");
  text.remove_prefix(1);
  return tuple;
}

}  // namespace spmd::hlo
