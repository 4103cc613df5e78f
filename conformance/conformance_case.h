#pragma once
// A conformance case (docs/conformance-format.md): one small SPMD program with its inputs and
// what JAX gives for it. Loading checks every field and reports the first one the format cannot
// read in one line; a program that reads well but that JAX rejects (a mesh with an axis name
// twice, pmap in_axes / out_axes of another length than the inputs / outputs) loads, with the rejection in program_error, so that it counts as the case's result.

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "conformance/process_inputs.h"
#include "reference/array.h"
#include "reference/collective_call.h"
#include "reference/context.h"
#include "reference/jax_version.h"
#include "reference/mesh.h"
#include "reference/pmap.h"
#include "reference/reduction_order.h"
#include "reference/shard_map.h"

namespace spmd::conformance {

// A reference to a value in the body: input k or the result of step k.
struct ValueRef {
  enum class Kind { input, step } kind = Kind::input;
  int index = 0;
};

enum class ElementwiseOp { add, sub, mul, neg, convert };

struct Step {
  std::string op;  // as written, for messages
  std::vector<ValueRef> args;
  std::variant<CollectiveCall, ElementwiseOp> action;
  DType convert_to = DType::float32;  // convert only
};

struct Case {
  std::string name;
  std::string about;
  std::string json_path;
  Mesh mesh{{1}, {"i"}};  // the case's mesh; left as it is here where program_error is set
  int device_count = 1;   // the product of mesh.shape, known even where the mesh is rejected
  bool is_pmap = true;
  PmapOptions pmap;
  ShardMapOptions shard_map;
  Values inputs;  // canonicalized as JAX does with x64 off (float64 -> float32, int64 -> int32)
  // A multi-process case (`processes`): each process's devices, and the inputs as global arrays
  // made from every process's local data by `load`; `inputs` then holds their global values (each
  // block read from its first holder), for messages.
  std::optional<ProcessInputs> processes;
  // `expected.local_outputs`: the expected values then continue, after the global outputs, with
  // each process's host-local outputs (global_array_to_host_local_array by out_specs), process
  // by process; run_body returns them in the same order.
  bool expects_local_outputs = false;
  std::vector<Step> body;
  std::vector<ValueRef> outputs;
  std::optional<Values> expected_outputs;  // as stored in the files
  std::optional<std::string> expected_error;
  ReductionOrder order;  // `order`: the algorithm and its parameters; xla_cpu when absent
  // `jax_version`: the JAX release the case records ("0.10" or "0.12"), whose checks it runs
  // with (pmap.jax_version / shard_map.jax_version); absent, load_case's default.
  std::optional<JaxVersion> stated_jax_version;
  // Why the program cannot be built or called, as JAX would reject it (the mesh's own checks,
  // in_axes / out_axes lengths); the case then cannot run, and this error is its result.
  std::optional<std::string> program_error;
};

// Loads NAME.json and the .npy files it names (relative to the JSON's folder). Throws
// spmd::Error, naming the file and the field, only where the format cannot be read: bad JSON, an
// unknown, missing or wrongly typed field, a bad reference (one to no value defined before it, by
// its exact name: "s00" is not "s0"), a missing .npy file.
// The case runs with the JAX release it states (`jax_version`), or `default_jax_version` (spmdsim
// conform --jax-version) where it states none.
Case load_case(const std::string& json_path,
               JaxVersion default_jax_version = kDefaultJaxVersion);

// The per-device program the case's body describes.
DeviceFunction body_function(const Case& c);

// The case's program run on `backend` over the case's inputs: its global outputs (for a
// multi-process case process_allgather(out, tiled=True), then each process's host-local outputs
// where the case expects them). Throws what the program raises (spmd::Error).
Values run_body(Backend& backend, const Case& c);

}  // namespace spmd::conformance
