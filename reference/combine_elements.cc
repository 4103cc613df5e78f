#include "reference/combine_elements.h"

#include "reference/scalar_arithmetic.h"

namespace spmd {
namespace {

template <class T, class Op>
void combine_typed(const void* lhs, const void* rhs, void* out, std::size_t count, Op op) {
  const auto* a = static_cast<const T*>(lhs);
  const auto* b = static_cast<const T*>(rhs);
  auto* result = static_cast<T*>(out);
  for (std::size_t i = 0; i < count; ++i) result[i] = op(a[i], b[i]);
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
