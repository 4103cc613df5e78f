#pragma once
// Backends by name, for `spmdsim conform --backend NAME`. A backend is made for one run with the
// reduction order it should fold float sums in and the number of devices it must offer.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reference/backend.h"
#include "reference/reduction_order.h"

namespace spmd {

using BackendFactory =
    std::function<std::unique_ptr<Backend>(const ReductionOrder& order, int device_count)>;

// Adds (or replaces) a backend; call before running cases. `native_order`: the order a real
// library folds float sums in when the user names none (Gloo's ring, ...); leave it out for
// backends that fold in whatever order they are given (the reference, the simulator).
void register_backend(const std::string& name, BackendFactory factory,
                      std::optional<ReductionOrder> native_order = std::nullopt);
// The named backend's native order, if it has one.
std::optional<ReductionOrder> backend_native_order(const std::string& name);
// Makes the named backend; spmd::Error listing the known names if there is none.
std::unique_ptr<Backend> make_backend(const std::string& name, const ReductionOrder& order,
                                      int device_count);
std::vector<std::string> backend_names();  // sorted
// spmd::Error listing the known names unless `name` is registered.
void check_backend_name(const std::string& name);

}  // namespace spmd
