#pragma once
// A training job as a workload file (docs/workload-format.md, "training"): a JSON object of
// kind "training" whose fields are the published-steps columns, so that any published run is a
// workload and `spmdsim train` predicts it exactly as `spmdsim validate` predicts its row.

#include <nlohmann/json_fwd.hpp>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "training/published_run.h"

namespace spmd::training {

// The published-steps columns a training workload may set (and "kind", "name").
const std::vector<std::string>& training_workload_fields();

// A training workload's fields as the table would write them (strings; numbers in their
// shortest exact form), checked for unknown fields, kinds and the "training" kind.
using TrainingFields = std::map<std::string, std::string, std::less<>>;
TrainingFields training_fields_from_json(const nlohmann::json& json, const std::string& file_name);

// spmd::Error naming the field ("job.json: tp: ...") for an unknown field, a value that is
// neither a string nor a number, or anything the published columns refuse.
PublishedRun training_run_from_json(const nlohmann::json& json, const std::string& file_name);
PublishedRun load_training_workload(const std::string& path);

}  // namespace spmd::training
