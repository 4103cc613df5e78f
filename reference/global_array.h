#pragma once
// spmd::GlobalArray: a jax.Array as its devices hold it: a global shape and dtype, a
// PartitionSpec over a mesh (a NamedSharding), and each device's block. In one process the
// blocks are cut from one global value; across processes each host fills its own devices' blocks
// (reference/multi_process.h), so replicas of a block may differ where hosts loaded different
// data, and each device computes with the block it holds, as in JAX.

#include <functional>
#include <vector>

#include "reference/array.h"
#include "reference/backend.h"
#include "reference/mesh.h"
#include "reference/partition_spec.h"
#include "reference/shard_map.h"

namespace spmd {

struct GlobalArray {
  Shape shape;
  DType dtype = DType::float32;
  PartitionSpec spec;
  std::vector<Array> blocks;  // by mesh device id

  // Cut from one global value (jax.device_put(value, NamedSharding(mesh, spec))).
  static GlobalArray from_value(const Array& value, const PartitionSpec& spec, const Mesh& mesh);
  // The global value, each block read from its first holder in device id order, as np.asarray
  // and process_allgather(tiled=True) read a jax.Array.
  Array value(const Mesh& mesh) const;
};

// One dimension of a block's place in the global array: [start, stop).
struct IndexRange {
  std::int64_t start = 0;
  std::int64_t stop = 0;
  friend bool operator==(const IndexRange&, const IndexRange&) = default;
};
using BlockIndex = std::vector<IndexRange>;  // per dimension

// Where `device`'s block lies in an array of `shape` under `spec` (the sharding's
// devices_indices_map entry). The shape must divide (check_shape_divides).
BlockIndex block_index_of(const Shape& shape, const PartitionSpec& spec, const Mesh& mesh,
                          int device);
// The shape of each block (NamedSharding.shard_shape); spmd::Error naming `field` where a
// dimension does not divide into its blocks.
Shape shard_shape(const Shape& shape, const PartitionSpec& spec, const Mesh& mesh,
                  const std::string& field);

// shard_map over global arrays: each device runs `function` on the blocks it holds (an argument
// whose sharding is not in_specs[k] is first resharded from its global value; a static argument,
// in_specs[k] == nullopt, is passed as its global value) and the outputs are global arrays with
// the out_specs' shardings. The same checks as run_shard_map.
std::vector<GlobalArray> run_shard_map_global(Backend& backend, const Mesh& mesh,
                                              const DeviceFunction& function,
                                              const ShardMapOptions& options,
                                              const std::vector<GlobalArray>& args);

}  // namespace spmd
