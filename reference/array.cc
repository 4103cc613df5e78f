#include "reference/array.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstring>

#include "reference/check.h"
#include "support/checked_math.h"

namespace spmd {
namespace {

// An array viewed as [outer, axis, inner] around one axis: the shape every structural op uses.
struct AxisView {
  std::int64_t outer = 1;
  std::int64_t axis_size = 1;
  std::size_t inner_bytes = 1;
};

AxisView view_around(const Array& array, int axis) {
  AxisView view;
  for (int d = 0; d < axis; ++d) view.outer *= array.dim(d);
  view.axis_size = array.dim(axis);
  std::int64_t inner = 1;
  for (int d = axis + 1; d < array.rank(); ++d) inner *= array.dim(d);
  view.inner_bytes = static_cast<std::size_t>(inner) * dtype_size_bytes(array.dtype());
  return view;
}

void check_dimensions(const Shape& shape) {
  for (std::int64_t d : shape) {
    if (d < 0) {
      throw Error(fmt::format("Array: negative dimension in shape {}", shape_to_string(shape)));
    }
  }
}

}  // namespace

std::int64_t element_count(const Shape& shape) {
  std::int64_t count = 1;
  for (std::int64_t d : shape) {
    count = checked_multiply(count, d, [&shape] {
      return fmt::format("element count of shape {}", shape_to_string(shape));
    });
  }
  return count;
}

std::string shape_to_string(const Shape& shape) {
  return fmt::format("({}{})", fmt::join(shape, ", "), shape.size() == 1 ? "," : "");
}

// Every default array shares one zero scalar (never written: mutable_bytes copies storage that
// others hold, and this static holds it too), so results and handles that start empty allocate
// nothing.
Array::Array() {
  static const std::shared_ptr<ArrayStorage> zero_scalar =
      std::make_shared<ArrayStorage>(dtype_size_bytes(DType::float32));
  storage_ = zero_scalar;
}

void Array::throw_value_count_mismatch(std::size_t value_count, const Shape& shape) {
  throw Error(fmt::format("Array::from_values: {} values for shape {}, expected {}", value_count,
                          shape_to_string(shape), element_count(shape)));
}

Array::Array(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  check_dimensions(shape_);
  storage_ = std::make_shared<ArrayStorage>(static_cast<std::size_t>(element_count(shape_)) *
                                          dtype_size_bytes(dtype_));
}

Array Array::from_bytes(DType dtype, Shape shape, std::vector<std::byte> bytes) {
  // Checked first: negative sizes can multiply to the right count (reshape to (-2, -3)).
  check_dimensions(shape);
  const std::size_t expected =
      static_cast<std::size_t>(element_count(shape)) * dtype_size_bytes(dtype);
  if (bytes.size() != expected) {
    throw Error(fmt::format("Array::from_bytes: {} bytes for {}{}, expected {}", bytes.size(),
                            dtype_name(dtype), shape_to_string(shape), expected));
  }
  Array array;
  array.dtype_ = dtype;
  array.shape_ = std::move(shape);
  array.storage_ = std::make_shared<ArrayStorage>(std::move(bytes));
  return array;
}

Array Array::generated(DType dtype, Shape shape, ElementGenerator generate) {
  check_dimensions(shape);
  Array array;
  array.dtype_ = dtype;
  array.shape_ = std::move(shape);
  array.storage_ = std::make_shared<ArrayStorage>(element_count(array.shape_),
                                                dtype_size_bytes(dtype), std::move(generate));
  return array;
}

std::span<std::byte> Array::mutable_bytes() {
  if (storage_.use_count() > 1) storage_ = storage_->copy();
  unrounded_f32_.reset();  // the values it was rounded from no longer match
  return storage_->mutable_bytes();
}

Array Array::with_unrounded_f32(Array values) const {
  SPMD_CHECK(dtype_ == DType::bfloat16 && values.dtype() == DType::float32 &&
                 values.shape() == shape_,
             fmt::format("with_unrounded_f32: {} with values {}, expected bfloat16 with float32 "
                         "values of the same shape",
                         type_string(), values.type_string()));
  Array copy = *this;
  copy.unrounded_f32_ = std::make_shared<const Array>(std::move(values));
  return copy;
}

Array Array::with_varying_axes(VaryingAxes axes) const {
  Array copy = *this;
  copy.varying_axes_ = axes;
  return copy;
}

void Array::check_storage(DType requested) const {
  if (requested != dtype_) {
    throw Error("Array: element access as " + std::string(dtype_name(requested)) +
                " on an array of dtype " + std::string(dtype_name(dtype_)));
  }
}

bool Array::bitwise_equal(const Array& other) const {
  return dtype_ == other.dtype_ && shape_ == other.shape_ &&
         (storage_ == other.storage_ || size_bytes() == 0 ||  // no memcmp of an empty data()
          std::memcmp(bytes().data(), other.bytes().data(), size_bytes()) == 0);
}

std::string shape_string(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

std::string Array::type_string() const {
  return std::string(dtype_name(dtype_)) + shape_string(shape_);
}

double Array::element_as_double(std::int64_t index) const {
  return visit_dtype(dtype_, [&](auto tag) -> double {
    using T = decltype(tag);
    const T value = values<T>()[static_cast<std::size_t>(index)];
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      return static_cast<double>(value.to_float());
    } else {
      return static_cast<double>(value);
    }
  });
}

std::string Array::values_string(std::int64_t max_elements) const {
  std::vector<std::string> items;
  const std::int64_t n = size();
  for (std::int64_t i = 0; i < n && i < max_elements; ++i) {
    if (dtype_ == DType::bool_) {
      items.push_back(values<bool>()[static_cast<std::size_t>(i)] ? "True" : "False");
    } else {
      items.push_back(fmt::format("{:.9g}", element_as_double(i)));  // as iostream precision 9
    }
  }
  return fmt::format("[{}{}]", fmt::join(items, ", "), n > max_elements ? ", ..." : "");
}

int normalize_axis(int axis, int rank, const std::string& field) {
  const int normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    throw Error(fmt::format("{0} = {1} is out of bounds for rank {2} (expected {3} <= axis < {2})",
                            field, axis, rank, -rank));
  }
  return normalized;
}

Array slice(const Array& array, int axis, std::int64_t start, std::int64_t stop) {
  axis = normalize_axis(axis, array.rank(), "slice axis");
  if (start < 0 || stop < start || stop > array.dim(axis)) {
    throw Error(fmt::format("slice: range [{}, {}) does not fit axis {} of size {}", start, stop,
                            axis, array.dim(axis)));
  }
  Shape shape = array.shape();
  shape[static_cast<std::size_t>(axis)] = stop - start;
  if (start == 0 && stop == array.dim(axis)) return array;
  Array out(array.dtype(), shape);
  const AxisView in = view_around(array, axis);
  const std::size_t row_bytes = static_cast<std::size_t>(stop - start) * in.inner_bytes;
  const std::byte* src = array.bytes().data();
  std::byte* dst = out.mutable_bytes().data();
  if (row_bytes == 0) return out.with_varying_axes(array.varying_axes());  // no memcpy of null
  for (std::int64_t o = 0; o < in.outer; ++o) {
    std::memcpy(dst + static_cast<std::size_t>(o) * row_bytes,
                src + (static_cast<std::size_t>(o * in.axis_size + start)) * in.inner_bytes,
                row_bytes);
  }
  return out.with_varying_axes(array.varying_axes());
}

Array take(const Array& array, int axis, std::int64_t index) {
  axis = normalize_axis(axis, array.rank(), "take axis");
  return squeeze(slice(array, axis, index, index + 1), axis);
}

Array concatenate(std::span<const Array> arrays, int axis) {
  if (arrays.empty()) throw Error("concatenate: no arrays given, expected at least one");
  const Array& first = arrays.front();
  axis = normalize_axis(axis, first.rank(), "concatenate axis");
  Shape shape = first.shape();
  shape[static_cast<std::size_t>(axis)] = 0;
  VaryingAxes varying = 0;
  for (const Array& a : arrays) {
    // Ranks compared first: a.dim(axis) does not exist on an array of lower rank.
    Shape expected = first.shape();
    if (a.rank() == first.rank()) expected[static_cast<std::size_t>(axis)] = a.dim(axis);
    if (a.dtype() != first.dtype() || a.shape() != expected) {
      throw Error(fmt::format("concatenate: {} does not match {} outside axis {}", a.type_string(),
                              first.type_string(), axis));
    }
    shape[static_cast<std::size_t>(axis)] += a.dim(axis);
    varying |= a.varying_axes();
  }
  Array out(first.dtype(), shape);
  std::byte* dst = out.mutable_bytes().data();
  const std::int64_t outer = view_around(first, axis).outer;
  for (std::int64_t o = 0; o < outer; ++o) {
    for (const Array& a : arrays) {
      const AxisView v = view_around(a, axis);
      const std::size_t row_bytes = static_cast<std::size_t>(v.axis_size) * v.inner_bytes;
      if (row_bytes == 0) continue;  // an empty array's data() may be null, which memcpy forbids
      std::memcpy(dst, a.bytes().data() + static_cast<std::size_t>(o) * row_bytes, row_bytes);
      dst += row_bytes;
    }
  }
  return out.with_varying_axes(varying);
}

Array stack(std::span<const Array> arrays, int axis) {
  if (arrays.empty()) throw Error("stack: no arrays given, expected at least one");
  axis = normalize_axis(axis, arrays.front().rank() + 1, "stack axis");
  std::vector<Array> expanded;
  expanded.reserve(arrays.size());
  for (const Array& a : arrays) expanded.push_back(expand_dims(a, axis));
  return concatenate(expanded, axis);
}

Array reshape(const Array& array, Shape shape) {
  if (element_count(shape) != array.size()) {
    throw Error(fmt::format("reshape: cannot reshape {} to shape {} (element counts differ)",
                            array.type_string(), shape_to_string(shape)));
  }
  check_dimensions(shape);
  return array.with_shape(std::move(shape));
}

Array expand_dims(const Array& array, int axis) {
  axis = normalize_axis(axis, array.rank() + 1, "expand_dims axis");
  Shape shape = array.shape();
  shape.insert(shape.begin() + axis, 1);
  return reshape(array, std::move(shape));
}

Array squeeze(const Array& array, int axis) {
  axis = normalize_axis(axis, array.rank(), "squeeze axis");
  if (array.dim(axis) != 1) {
    throw Error(fmt::format(
        "cannot select an axis to squeeze out which has size not equal to one, got shape={} and "
        "dimensions=({},)",
        shape_to_string(array.shape()), axis));
  }
  Shape shape = array.shape();
  shape.erase(shape.begin() + axis);
  return reshape(array, std::move(shape));
}

Array zeros_like(const Array& array) {
  return Array(array.dtype(), array.shape()).with_varying_axes(array.varying_axes());
}

}  // namespace spmd
