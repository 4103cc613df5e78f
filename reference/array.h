#pragma once
// spmd::Array: an N-d array of one dtype, row-major, with value semantics. Copies share the
// buffer until one of them is written (copy on write), so passing arrays between devices and
// collectives costs no copy. The buffer may be generated: made from each element's index when
// first read (reference/array_storage.h).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "reference/array_storage.h"
#include "reference/dtype.h"
#include "reference/error.h"

namespace spmd {

using Shape = std::vector<std::int64_t>;

std::int64_t element_count(const Shape& shape);
std::string shape_to_string(const Shape& shape);  // "(4, 3)", "()" as NumPy prints shapes

// Mesh axes an array varies over (bit k = mesh axis k): the "varying manual axes" type that
// shard_map's check_vma tracks. Zero means invariant (the same on every device).
using VaryingAxes = std::uint64_t;

// "[4,3]", as in a type string.
std::string shape_string(const Shape& shape);

class Array {
 public:
  Array();                          // a float32 scalar 0
  Array(DType dtype, Shape shape);  // zero-filled

  static Array from_bytes(DType dtype, Shape shape, std::vector<std::byte> bytes);
  // Elements that `generate` writes when they are first read (flat row-major indices), never
  // all at once where a reader takes them a range at a time (element_generator below).
  static Array generated(DType dtype, Shape shape, ElementGenerator generate);
  template <class T>
  static Array from_values(Shape shape, const std::vector<T>& values);
  template <class T>
  static Array scalar(T value) {
    return from_values<T>({}, {value});
  }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  std::int64_t dim(int axis) const { return shape_.at(static_cast<std::size_t>(axis)); }
  std::int64_t size() const { return element_count(shape_); }
  std::size_t size_bytes() const { return storage_->size_bytes(); }

  std::span<const std::byte> bytes() const { return storage_->bytes(); }
  std::span<std::byte> mutable_bytes();

  template <class T>
  std::span<const T> values() const {
    check_storage(DTypeOf<T>::value);
    return {reinterpret_cast<const T*>(bytes().data()), static_cast<std::size_t>(size())};
  }
  template <class T>
  std::span<T> mutable_values() {
    check_storage(DTypeOf<T>::value);
    return {reinterpret_cast<T*>(mutable_bytes().data()), static_cast<std::size_t>(size())};
  }

  // A generated array's generator while its bytes have not been made (else null): a reader that
  // takes elements a range at a time asks it for them instead of calling bytes().
  const ElementGenerator* element_generator() const { return storage_->pending_generator(); }

  VaryingAxes varying_axes() const { return varying_axes_; }
  Array with_varying_axes(VaryingAxes axes) const;
  // The same elements (the same storage, until one is written) under another shape of the same
  // element count; reshape() checks the count.
  Array with_shape(Shape shape) const {
    Array out = *this;
    out.shape_ = std::move(shape);
    out.unrounded_f32_.reset();
    return out;
  }

  // A bfloat16 array that an add / sub / mul computed in float32 under
  // FloatNumerics::bf16_excess_precision keeps the float32 values it was rounded from, for the
  // consumers XLA lets skip the rounding (psum, pmean, psum_scatter, a convert to float32). Null
  // for every other array. Copies keep it; new arrays made from this one (slices, reshapes, other
  // element-wise results) and writes drop it.
  const Array* unrounded_f32() const { return unrounded_f32_.get(); }
  Array with_unrounded_f32(Array values) const;
  // This array as stored: the same elements without unrounded_f32 values (what a collective that
  // moves the bfloat16 elements delivers).
  Array as_stored() const {
    Array out = *this;
    out.unrounded_f32_.reset();
    return out;
  }

  // Same dtype, shape and bytes (NaN payloads included).
  bool bitwise_equal(const Array& other) const;
  // Whether both hold the very same storage (copies share it until one is written).
  bool shares_storage_with(const Array& other) const { return storage_ == other.storage_; }
  // "float32[4,3]", as JAX writes an abstract value.
  std::string type_string() const;
  // Values as NumPy would print them flat, e.g. "[1, 2, 3]", for messages and examples.
  std::string values_string(std::int64_t max_elements = 64) const;
  // Element i (row-major) as a double, for messages and tests; bool as 0/1.
  double element_as_double(std::int64_t index) const;

 private:
  void check_storage(DType requested) const;
  [[noreturn]] static void throw_value_count_mismatch(std::size_t value_count, const Shape& shape);

  DType dtype_ = DType::float32;
  Shape shape_;
  std::shared_ptr<ArrayStorage> storage_;
  VaryingAxes varying_axes_ = 0;
  std::shared_ptr<const Array> unrounded_f32_;
};

template <class T>
Array Array::from_values(Shape shape, const std::vector<T>& values) {
  if (static_cast<std::int64_t>(values.size()) != element_count(shape)) {
    throw_value_count_mismatch(values.size(), shape);
  }
  Array array(DTypeOf<T>::value, std::move(shape));
  auto out = array.template mutable_values<T>();
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return array;
}

// Axis helpers. `normalize_axis` maps a negative axis to axis + rank and checks the range; the
// field name goes into the error ("all_gather axis", ...).
int normalize_axis(int axis, int rank, const std::string& field);

// Structural operations (no arithmetic, the bits move unchanged).
Array slice(const Array& array, int axis, std::int64_t start, std::int64_t stop);
Array take(const Array& array, int axis, std::int64_t index);  // slice of one, axis removed
Array concatenate(std::span<const Array> arrays, int axis);
Array stack(std::span<const Array> arrays, int axis);
Array reshape(const Array& array, Shape shape);
Array expand_dims(const Array& array, int axis);
Array squeeze(const Array& array, int axis);  // the axis must have size 1
Array zeros_like(const Array& array);

}  // namespace spmd
