#include "backends/mpi/mpi_reduction.h"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "reference/error.h"
#include "reference/combine_elements.h"

namespace spmd::mpi {
namespace {

// The native pair, when C's arithmetic on the element type is the reference's. Integer sums wrap
// in Open MPI's loops (`*b += *a`, two's complement, as spmd::arith::add); integer max / min have
// no ties to break; float max / min do not (MPI_MAX keeps the second operand when one is NaN).
std::optional<Reduction> native_reduction(DType dtype, ReduceOp op) {
  const auto native_type = [&]() -> MPI_Datatype {
    switch (dtype) {
      case DType::float64: return MPI_DOUBLE;
      case DType::float32: return MPI_FLOAT;
      case DType::int64: return MPI_INT64_T;
      case DType::int32: return MPI_INT32_T;
      case DType::int8: return MPI_INT8_T;
      case DType::uint8: return MPI_UINT8_T;
      default: return MPI_DATATYPE_NULL;
    }
  }();
  if (native_type == MPI_DATATYPE_NULL) return std::nullopt;
  if (op == ReduceOp::sum) return Reduction{native_type, MPI_SUM};
  if (is_integer(dtype)) return Reduction{native_type, op == ReduceOp::max ? MPI_MAX : MPI_MIN};
  return std::nullopt;
}

// MPI_User_function: inoutvec[i] = combine(invec[i], inoutvec[i]) with the received operand on
// the left, as a fold tree's earlier (lower-rank) subtree is in Open MPI's recursive doubling and
// linear reduce (ompi_op_reduce(op, source, target) computes target = source op target), or
// combine(inoutvec[i], invec[i]) with the process's own on the left, as Open MPI's ring keeps it.
// Only max / min care which operand is left (a tie of +0.0 and -0.0 keeps the left one);
// Rabenseifner mixes the two, so there such ties can differ from the reference's fold
// (docs/backends.md#open-mpi-backendsmpi).
template <class T, ReduceOp kOp, LeftOperand kLeft>
void user_combine(void* invec, void* inoutvec, int* length, MPI_Datatype*) {
  const void* lhs = kLeft == LeftOperand::received ? invec : inoutvec;
  const void* rhs = kLeft == LeftOperand::received ? inoutvec : invec;
  spmd::combine_elements(DTypeOf<T>::value, kOp, lhs, rhs, inoutvec,
                         static_cast<std::size_t>(*length));
}

void check(int status, const char* call) {
  if (status != MPI_SUCCESS) {
    throw Error(fmt::format("{} returned MPI error {}, expected MPI_SUCCESS", call, status));
  }
}

struct UserReductions {
  std::map<std::size_t, MPI_Datatype> byte_types;  // by element size
  std::map<std::tuple<DType, ReduceOp, LeftOperand>, MPI_Op> ops;
};

UserReductions& user_reductions() {
  static UserReductions reductions;
  return reductions;
}

MPI_Datatype byte_type(std::size_t element_bytes) {
  auto& types = user_reductions().byte_types;
  if (auto found = types.find(element_bytes); found != types.end()) return found->second;
  MPI_Datatype type;
  check(MPI_Type_contiguous(static_cast<int>(element_bytes), MPI_BYTE, &type),
        "MPI_Type_contiguous");
  check(MPI_Type_commit(&type), "MPI_Type_commit");
  types.emplace(element_bytes, type);
  return type;
}

template <class T, LeftOperand kLeft>
MPI_User_function* element_function(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return user_combine<T, ReduceOp::sum, kLeft>;
    case ReduceOp::max: return user_combine<T, ReduceOp::max, kLeft>;
    case ReduceOp::min: return user_combine<T, ReduceOp::min, kLeft>;
  }
  return nullptr;
}

MPI_Op user_op(DType dtype, ReduceOp op, LeftOperand left) {
  auto& ops = user_reductions().ops;
  if (auto found = ops.find({dtype, op, left}); found != ops.end()) return found->second;
  MPI_User_function* function = visit_dtype(dtype, [op, left](auto zero) {
    using T = decltype(zero);
    return left == LeftOperand::received ? element_function<T, LeftOperand::received>(op)
                                         : element_function<T, LeftOperand::own>(op);
  });
  MPI_Op mpi_op;
  // Commutative, so that Open MPI runs the pinned algorithm (it falls back to order-keeping
  // algorithms for non-commutative ops; the order cases check that it does not).
  check(MPI_Op_create(function, /*commute=*/1, &mpi_op), "MPI_Op_create");
  ops.emplace(std::tuple{dtype, op, left}, mpi_op);
  return mpi_op;
}

}  // namespace

Reduction reduction_for(DType dtype, ReduceOp op, LeftOperand left) {
  if (op == ReduceOp::sum && dtype == DType::bool_) {
    throw Error("MPI sum of bool, expected bool converted to int32 first (as psum does)");
  }
  if (auto native = native_reduction(dtype, op)) return *native;
  return {byte_type(dtype_size_bytes(dtype)), user_op(dtype, op, left)};
}

void free_reductions() {
  UserReductions& reductions = user_reductions();
  for (auto& [key, op] : reductions.ops) MPI_Op_free(&op);
  for (auto& [size, type] : reductions.byte_types) MPI_Type_free(&type);
  reductions = {};
}

}  // namespace spmd::mpi
