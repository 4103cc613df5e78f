#include "examples/example_ops.h"

#include <fmt/format.h>

#include <string>

#include "reference/elementwise.h"

namespace spmd {
namespace {

void require_float32(const Array& a, const char* op) {
  if (a.dtype() != DType::float32) {
    throw Error(fmt::format("{}: expected float32, got {}", op, a.type_string()));
  }
}

}  // namespace

Array arange_f32(Shape shape, float scale) {
  Array out(DType::float32, std::move(shape));
  auto values = out.mutable_values<float>();
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * scale;
  return out;
}

Array arange_i32(Shape shape) {
  Array out(DType::int32, std::move(shape));
  auto values = out.mutable_values<std::int32_t>();
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(i);
  return out;
}

Array full_f32(Shape shape, float value) {
  Array out(DType::float32, std::move(shape));
  for (float& v : out.mutable_values<float>()) v = value;
  return out;
}

Array divide(const Array& a, const Array& b) {
  require_float32(a, "divide");
  require_float32(b, "divide");
  if (b.rank() != 0 && b.shape() != a.shape()) {
    throw Error(fmt::format("divide: divisor {} must be a scalar or match {}", b.type_string(),
                            a.type_string()));
  }
  Array out(DType::float32, a.shape());
  const auto x = a.values<float>();
  const auto y = b.values<float>();
  auto z = out.mutable_values<float>();
  for (std::size_t i = 0; i < z.size(); ++i) z[i] = x[i] / y[b.rank() == 0 ? 0 : i];
  return out.with_varying_axes(a.varying_axes() | b.varying_axes());
}

Array scale(const Array& a, float factor) { return mul(a, Array::scalar(factor)); }

Array sum_axis(const Array& a, int axis, bool keepdims) {
  require_float32(a, "sum_axis");
  axis = normalize_axis(axis, a.rank(), "sum axis");
  Array total = take(a, axis, 0);
  for (std::int64_t i = 1; i < a.dim(axis); ++i) total = add(total, take(a, axis, i));
  return keepdims ? expand_dims(total, axis) : total;
}

Array sum_all(const Array& a) { return sum_axis(reshape(a, {a.size()}), 0); }

Array dot(const Array& a, const Array& b) {
  require_float32(a, "dot");
  require_float32(b, "dot");
  if (a.rank() != 2 || b.rank() != 2 || a.dim(1) != b.dim(0)) {
    throw Error(fmt::format("dot: shapes {} and {} are not aligned for a matrix product",
                            a.type_string(), b.type_string()));
  }
  const std::int64_t rows = a.dim(0), inner = a.dim(1), cols = b.dim(1);
  Array out(DType::float32, {rows, cols});
  const auto x = a.values<float>();
  const auto y = b.values<float>();
  auto z = out.mutable_values<float>();
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      float acc = 0;
      for (std::int64_t k = 0; k < inner; ++k) {
        acc +=
            x[static_cast<std::size_t>(i * inner + k)] * y[static_cast<std::size_t>(k * cols + j)];
      }
      z[static_cast<std::size_t>(i * cols + j)] = acc;
    }
  }
  return out.with_varying_axes(a.varying_axes() | b.varying_axes());
}

bool replicas_bit_identical(const Array& stacked) {
  const Array first = take(stacked, 0, 0);
  for (std::int64_t d = 1; d < stacked.dim(0); ++d) {
    if (!take(stacked, 0, d).bitwise_equal(first)) return false;
  }
  return true;
}

}  // namespace spmd
