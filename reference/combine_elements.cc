#include "reference/combine_elements.h"

#include <cstring>

#include "reference/scalar_arithmetic.h"

namespace spmd {
namespace {

// Elements are copied in and out: a library's buffers (an MPI byte datatype's) need not be
// aligned for T.
template <class T, class Op>
void combine_typed(const void* lhs, const void* rhs, void* out, std::size_t count, Op op) {
  const auto* a = static_cast<const std::byte*>(lhs);
  const auto* b = static_cast<const std::byte*>(rhs);
  auto* result = static_cast<std::byte*>(out);
  for (std::size_t i = 0; i < count; ++i) {
    T x, y;
    std::memcpy(&x, a + i * sizeof(T), sizeof(T));
    std::memcpy(&y, b + i * sizeof(T), sizeof(T));
    const T z = op(x, y);
    std::memcpy(result + i * sizeof(T), &z, sizeof(T));
  }
}

}  // namespace

void combine_elements(DType dtype, ReduceOp op, const void* lhs, const void* rhs, void* out,
                      std::size_t count) {
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    switch (op) {
      case ReduceOp::sum: return combine_typed<T>(lhs, rhs, out, count, arith::add<T>);
      case ReduceOp::max: return combine_typed<T>(lhs, rhs, out, count, arith::max<T>);
      case ReduceOp::min: return combine_typed<T>(lhs, rhs, out, count, arith::min<T>);
    }
  });
}

}  // namespace spmd
