#include "backends/plugin/plugin_host.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "reference/combine_elements.h"

namespace spmd::plugin {
namespace {

// Messages longer than this are cut: the CLI prints them on one line.
constexpr std::size_t kMostMessageChars = 2000;

thread_local std::optional<std::string> t_error_message;

void set_error(const char* message) noexcept {
  std::string text = message == nullptr ? "(set_error(NULL))" : message;
  std::replace(text.begin(), text.end(), '\n', ' ');  // one line
  if (text.size() > kMostMessageChars) text.resize(kMostMessageChars);
  t_error_message = std::move(text);
}

int combine(spmdsim_dtype abi_dtype_value, spmdsim_reduce_op abi_op, const void* in, void* inout,
            size_t count) noexcept {
  const std::optional<DType> dtype = dtype_from_abi(abi_dtype_value);
  const std::optional<ReduceOp> op = reduce_op_from_abi(abi_op);
  if (!dtype || !op) {
    set_error(fmt::format("combine(dtype {}, op {}): expected a spmdsim_dtype and a "
                          "spmdsim_reduce_op from spmdsim_plugin.h",
                          static_cast<int>(abi_dtype_value), static_cast<int>(abi_op))
                  .c_str());
    return 1;
  }
  // inout[i] = op(in[i], inout[i]): the reference's fold node op(lhs, rhs) with the new
  // contribution on the left (fold_tree.h, fold_new_plus_acc).
  combine_elements(*dtype, *op, in, inout, inout, count);
  return 0;
}

}  // namespace

const spmdsim_host& host_table() {
  static const spmdsim_host host{
      .abi_version = SPMDSIM_PLUGIN_ABI_VERSION, .combine = combine, .set_error = set_error};
  return host;
}

std::string take_error_message() {
  std::optional<std::string> message = std::exchange(t_error_message, std::nullopt);
  return message.value_or("(no message: the plugin did not call set_error)");
}

spmdsim_dtype abi_dtype(DType dtype) {
  switch (dtype) {
    case DType::float64: return SPMDSIM_FLOAT64;
    case DType::float32: return SPMDSIM_FLOAT32;
    case DType::float16: return SPMDSIM_FLOAT16;
    case DType::bfloat16: return SPMDSIM_BFLOAT16;
    case DType::int64: return SPMDSIM_INT64;
    case DType::int32: return SPMDSIM_INT32;
    case DType::int8: return SPMDSIM_INT8;
    case DType::uint8: return SPMDSIM_UINT8;
    case DType::bool_: return SPMDSIM_BOOL;
  }
  __builtin_unreachable();
}

spmdsim_reduce_op abi_reduce_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return SPMDSIM_SUM;
    case ReduceOp::max: return SPMDSIM_MAX;
    case ReduceOp::min: return SPMDSIM_MIN;
  }
  __builtin_unreachable();
}

std::optional<DType> dtype_from_abi(int dtype) {
  for (DType candidate : kAllDTypes) {
    if (static_cast<int>(abi_dtype(candidate)) == dtype) return candidate;
  }
  return std::nullopt;
}

std::optional<ReduceOp> reduce_op_from_abi(int op) {
  for (ReduceOp candidate : {ReduceOp::sum, ReduceOp::max, ReduceOp::min}) {
    if (static_cast<int>(abi_reduce_op(candidate)) == op) return candidate;
  }
  return std::nullopt;
}

}  // namespace spmd::plugin
