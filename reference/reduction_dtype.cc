#include "reference/reduction_dtype.h"

#include <fmt/format.h>

#include "reference/error.h"

namespace spmd {

DType reduction_dtype(CollectiveOp op, DType input) {
  const bool converts_bool = op == CollectiveOp::psum || op == CollectiveOp::pmean;
  return converts_bool && input == DType::bool_ ? DType::int32 : input;
}

ReduceOp reduction_op(CollectiveOp op, DType input) {
  switch (op) {
    case CollectiveOp::psum:
    case CollectiveOp::pmean: return ReduceOp::sum;
    case CollectiveOp::psum_scatter:
      if (input == DType::bool_) {
        throw Error("psum_scatter of bool, expected it rejected by validate_collective (JAX's "
                    "add does not accept bool)");
      }
      return ReduceOp::sum;
    case CollectiveOp::pmax: return ReduceOp::max;
    case CollectiveOp::pmin: return ReduceOp::min;
    default: break;
  }
  throw Error(fmt::format("{} reduces nothing, expected psum, pmean, pmax, pmin or psum_scatter",
                          collective_op_name(op)));
}

}  // namespace spmd
