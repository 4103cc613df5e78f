#include "reference/array_difference.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "reference/check.h"

namespace spmd {
namespace {

bool element_equal(const Array& a, const Array& b, std::int64_t i) {
  const std::size_t size = dtype_size_bytes(a.dtype());
  const auto offset = static_cast<std::size_t>(i) * size;
  if (std::memcmp(a.bytes().data() + offset, b.bytes().data() + offset, size) == 0) return true;
  return is_floating(a.dtype()) && std::isnan(a.element_as_double(i)) &&
         std::isnan(b.element_as_double(i));  // NaN payloads aside
}

}  // namespace

std::optional<std::int64_t> first_differing_element(const Array& got, const Array& expected) {
  SPMD_CHECK(got.dtype() == expected.dtype() && got.shape() == expected.shape(),
             "first_differing_element compares arrays of one type");
  for (std::int64_t i = 0; i < got.size(); ++i) {
    if (!element_equal(got, expected, i)) return i;
  }
  return std::nullopt;
}

Shape element_index(const Shape& shape, std::int64_t flat) {
  Shape index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

std::optional<std::string> first_difference(const Array& got, const Array& expected) {
  if (got.dtype() != expected.dtype() || got.shape() != expected.shape()) {
    return fmt::format("is {}, expected {}", got.type_string(), expected.type_string());
  }
  const std::optional<std::int64_t> i = first_differing_element(got, expected);
  if (!i) return std::nullopt;
  return fmt::format("element {} is {:.9g}, expected {:.9g}",
                     shape_to_string(element_index(got.shape(), *i)), got.element_as_double(*i),
                     expected.element_as_double(*i));
}

}  // namespace spmd
