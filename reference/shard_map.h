#pragma once
// shard_map: split global inputs into per-device blocks by in_specs, run the per-device function
// on a backend, and assemble global outputs by out_specs (jax.shard_map, jit-wrapped, all mesh
// axes manual). Errors are JAX's, in clear words.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "reference/backend.h"
#include "reference/jax_version.h"
#include "reference/partition_spec.h"

namespace spmd {

struct ShardMapOptions {
  // One spec per argument; std::nullopt marks a static argument, passed to every device as is.
  std::vector<std::optional<PartitionSpec>> in_specs;
  std::vector<PartitionSpec> out_specs;
  // Prove statically (by the varying-axes type) that outputs whose spec omits a mesh axis are
  // replicated along it. With false, such outputs are read from the first device holding each
  // block, as JAX reads them.
  bool check_vma = true;
  // The JAX release whose collective checks the body's collectives make
  // (reference/jax_version.h): 0.12 unless 0.10 is asked for.
  JaxVersion jax_version = kDefaultJaxVersion;
  std::string function_name = "f";  // quoted in error messages
};

Values run_shard_map(Backend& backend, const Mesh& mesh, const DeviceFunction& function,
                     const ShardMapOptions& options, const Values& args);

// The per-device blocks of each argument: result[device][argument].
std::vector<Values> split_by_specs(const Mesh& mesh, const ShardMapOptions& options,
                                   const Values& args);
// Global outputs from every device's outputs.
Values assemble_by_specs(const Mesh& mesh, const ShardMapOptions& options,
                         const std::vector<Values>& per_device);

// shard_map(f, mesh, options) as a callable: result(backend, args).
std::function<Values(Backend&, const Values&)> shard_map(DeviceFunction function, Mesh mesh,
                                                         ShardMapOptions options);

}  // namespace spmd
