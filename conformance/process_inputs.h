#pragma once
// A multi-process case's inputs (docs/conformance-format.md, "Multi-process cases"): the
// `processes` field, each process's devices and local input files, and the `load` field, the JAX
// function that makes each global input from every process's local data.

#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "reference/global_array.h"
#include "reference/process_layout.h"
#include "reference/shard_map.h"
#include "support/json_reader.h"

namespace spmd::conformance {

enum class LoadFunction {
  make_array_from_process_local_data,
  host_local_array_to_global_array,
  make_array_from_callback,  // each process's file is the global array as that host has it
};

struct ProcessInputs {
  ProcessLayout layout;
  LoadFunction load = LoadFunction::make_array_from_process_local_data;
  std::vector<GlobalArray> arrays;  // one per input, sharded by the case's in_specs
};

// Reads `processes` (and `load`, which may be absent) for a shard_map case on `mesh`; the
// errors name the field, the value and what was expected. `load_array` reads one
// {"file": ...} entry.
ProcessInputs read_process_inputs(const JsonValue& processes, const std::optional<JsonValue>& load,
                                  const Mesh& mesh, const ShardMapOptions& shard_map,
                                  const std::function<Array(const JsonValue&)>& load_array);

}  // namespace spmd::conformance
