#pragma once
// A `transformer` workload (docs/workload-format.md, the simulated model that `run` and `scale`
// take) as the `training` workload of the same job, so that `spmdsim plan` searches the layouts
// of a model written for them (docs/plan.md, "Model files"). The model's shape and batch carry
// over; the layout fields the file gives become the training workload's (held fixed by the
// search); what the training model cannot honour is an error naming the field: an optimizer
// other than Adam, optimizer states narrower than float32, a matmul efficiency of the file's own,
// float32 math, gradient reductions that do not overlap the compute, and tensor parallelism
// without sequence parallelism.

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace spmd::training {

// The `training` workload that describes `transformer`'s job; spmd::Error, prefixed with
// `file_name`, for a field that is not a transformer workload's, a value its reader refuses, or
// one the training model cannot honour.
nlohmann::json training_workload_of_transformer(const nlohmann::json& transformer,
                                                const std::string& file_name);

}  // namespace spmd::training
