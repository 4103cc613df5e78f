#pragma once
// What spmdsim offers a plugin (spmdsim_plugin.h's spmdsim_host): combine(), the reference's
// element arithmetic on raw buffers, and set_error(), which keeps a failing call's message for
// the thread that made the call. Also the mapping between the ABI's enums and spmdsim's.

#include <optional>
#include <string>

#include "backends/plugin/spmdsim_plugin.h"
#include "reference/dtype.h"
#include "reference/fold_reduce.h"

namespace spmd::plugin {

// The host table handed to every plugin's entry point (static storage).
const spmdsim_host& host_table();

// The message the plugin set on this thread since the last call (set_error), cleared; a
// placeholder naming the missing message when it set none.
std::string take_error_message();

spmdsim_dtype abi_dtype(DType dtype);
spmdsim_reduce_op abi_reduce_op(ReduceOp op);
// The spmdsim types of the ABI's numbers; nothing for a number outside the enums.
std::optional<DType> dtype_from_abi(int dtype);
std::optional<ReduceOp> reduce_op_from_abi(int op);

}  // namespace spmd::plugin
