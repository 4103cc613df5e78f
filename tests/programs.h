#pragma once
// Running a per-device function under shard_map on the reference backend, for example tests.

#include <optional>
#include <vector>

#include "reference/reference_backend.h"
#include "reference/shard_map.h"

namespace spmd {

inline Values shard_map_on(const Mesh& mesh, const DeviceFunction& f, const Values& args,
                           std::vector<std::optional<PartitionSpec>> in_specs,
                           std::vector<PartitionSpec> out_specs, bool check_vma = true) {
  ReferenceBackend reference;
  ShardMapOptions options;
  options.in_specs = std::move(in_specs);
  options.out_specs = std::move(out_specs);
  options.check_vma = check_vma;
  return run_shard_map(reference, mesh, f, options, args);
}

}  // namespace spmd
