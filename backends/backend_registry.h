#pragma once
// Backends by name, for `spmdsim conform --backend NAME`. A backend is made for one run with the
// reduction order it should fold float sums in and the number of devices it must offer.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "reference/backend.h"
#include "reference/reduction_order.h"

namespace spmd {

using BackendFactory =
    std::function<std::unique_ptr<Backend>(const ReductionOrder& order, int device_count)>;

// Adds (or replaces) a backend; call before running cases.
void register_backend(const std::string& name, BackendFactory factory);
// Makes the named backend; spmd::Error listing the known names if there is none.
std::unique_ptr<Backend> make_backend(const std::string& name, const ReductionOrder& order,
                                      int device_count);
std::vector<std::string> backend_names();  // sorted
// spmd::Error listing the known names unless `name` is registered.
void check_backend_name(const std::string& name);

}  // namespace spmd
