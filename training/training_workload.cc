#include "training/training_workload.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "reference/error.h"
#include "support/json_reader.h"

namespace spmd::training {
namespace {

// A JSON value as the table would write it: strings as they are, integers without a point,
// other numbers in their shortest exact form.
std::string field_text(const nlohmann::json& value, const std::string& where,
                       const std::string& key) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
  if (value.is_number_float()) {
    const double number = value.get<double>();
    if (std::isfinite(number) && number == std::floor(number) && std::abs(number) < 9e15) {
      return std::to_string(static_cast<std::int64_t>(number));
    }
    return fmt::format("{}", number);
  }
  if (value.is_null()) return "";
  throw Error(fmt::format("{}: {} {}: expected a string or a number", where, key,
                          shortened_text(value.dump())));
}

}  // namespace

const std::vector<std::string>& training_workload_fields() {
  static const std::vector<std::string> fields = {
      "kind", "name", "source_id", "model", "layers", "d_model", "heads", "kv_heads", "d_ff",
      "vocabulary", "moe_experts", "moe_topk", "seq_len", "global_batch_seqs", "micro_batch",
      "gpu", "gpus_total", "gpus_per_node", "dp", "tp", "pp", "cp", "ep", "vp", "fsdp",
      "zero_stage", "recompute", "precision", "measured_tokens_per_s_per_gpu",
      "measured_step_s", "software", "cp_comm_type", "moe_imbalance"};
  return fields;
}

TrainingFields training_fields_from_json(const nlohmann::json& json,
                                         const std::string& file_name) {
  if (!json.is_object()) {
    throw Error(fmt::format("{}: expected a JSON object of kind \"training\"", file_name));
  }
  TrainingFields fields;
  const std::vector<std::string>& known = training_workload_fields();
  for (const auto& [key, value] : json.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      throw Error(fmt::format("{}: unknown field '{}', expected one of {}", file_name, key,
                              fmt::join(known, ", ")));
    }
    fields[key] = field_text(value, file_name, key);
  }
  const auto kind = fields.find("kind");
  if (kind == fields.end() || kind->second != "training") {
    throw Error(fmt::format("{}: kind '{}': expected \"training\"", file_name,
                            kind == fields.end() ? "" : kind->second));
  }
  if (!fields.contains("source_id")) {
    const auto name = fields.find("name");
    fields["source_id"] = name == fields.end() ? "job" : name->second;
  }
  return fields;
}

PublishedRun training_run_from_json(const nlohmann::json& json, const std::string& file_name) {
  const TrainingFields fields = training_fields_from_json(json, file_name);
  const FieldLookup lookup = [&](std::string_view column) {
    const auto at = fields.find(column);
    return at == fields.end() ? std::string() : at->second;
  };
  return published_run(lookup, file_name, 0);
}

PublishedRun load_training_workload(const std::string& path) {
  return training_run_from_json(parse_json_file(path, "a training workload"), path);
}

}  // namespace spmd::training
