#pragma once
// JAX's multi-process (multi-host) array API, for a program whose mesh spans several processes
// (reference/process_layout.h). Each process holds data only for its own devices; these
// functions build a global array from every process's host data at once, or split one into each
// process's host data, with the exact semantics of jax/_src/array.py and
// jax/experimental/multihost_utils.py (docs/multi-process.md):
//
//   make_array_from_callback            each process's callback fills its devices' blocks
//   make_array_from_process_local_data  each process's data is the part its devices hold
//   host_local_array_to_global_array    each process's data is sharded over its local mesh
//   global_array_to_host_local_array    the reverse: each process's part of a global array
//   process_allgather                   every process's host value, stacked or concatenated
//
// Arguments indexed by process take one entry per process, in process order. Errors are
// spmd::Error, one line naming the field (`field(process)`, by default "local_data[p]"), the
// value and what was expected: data of the wrong shape for the process's shards, a dtype that
// differs between processes, a sharding JAX cannot infer a global shape for.

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "reference/global_array.h"
#include "reference/process_layout.h"

namespace spmd {

// Names process p's argument in errors.
using ProcessField = std::function<std::string(int process)>;
std::string default_process_field(int process);  // "local_data[p]"

// The data that `process` gives for the block at `index` of the global array.
using BlockCallback = std::function<Array(int process, const BlockIndex& index)>;

// jax.make_array_from_callback(shape, NamedSharding(mesh, spec), callback), run on every process:
// each process calls the callback for each of its devices' blocks. spmd::Error where a block
// has another shape than the shard shape, or another dtype than the others.
GlobalArray make_array_from_callback(const Mesh& mesh, const ProcessLayout& layout,
                                     const Shape& shape, const PartitionSpec& spec,
                                     const BlockCallback& callback,
                                     const ProcessField& field = default_process_field);

// jax.make_array_from_process_local_data(NamedSharding(mesh, spec), local_data[p], global_shape)
// on every process p. Each dimension of a process's data is either the global size (the process
// holds the whole dimension and each device reads its own slice of it) or the size the process's
// devices address in it (their distinct blocks, in order). Without a global shape it is inferred
// from the data, as JAX does, where the sharding is uniform across processes.
GlobalArray make_array_from_process_local_data(const Mesh& mesh, const ProcessLayout& layout,
                                               const PartitionSpec& spec,
                                               std::span<const Array> local_data,
                                               const std::optional<Shape>& global_shape = {},
                                               const ProcessField& field = default_process_field);

// multihost_utils.host_local_array_to_global_array(local_data[p], mesh, spec) on every process
// p: the process's data is laid over its local mesh by `spec`, and the global shape is the local
// shape times the number of local meshes along each sharded dimension. Each process's devices
// must form a contiguous subcube of the mesh.
GlobalArray host_local_array_to_global_array(const Mesh& mesh, const ProcessLayout& layout,
                                             const PartitionSpec& spec,
                                             std::span<const Array> local_data,
                                             const ProcessField& field = default_process_field);

// multihost_utils.global_array_to_host_local_array(array, mesh, spec): each process's host-local
// value, indexed by process, read from the blocks its devices hold (the first replica in local
// device order). An array of another sharding is first resharded from its global value.
std::vector<Array> global_array_to_host_local_array(const Mesh& mesh, const ProcessLayout& layout,
                                                    const PartitionSpec& spec,
                                                    const GlobalArray& array);

// multihost_utils.process_allgather(host_value[p], tiled) on every process: what every process
// gets, the processes' values stacked on a new axis 0 (tiled false, or scalars) or concatenated
// along axis 0. Every process must have as many local devices and values of one shape and dtype.
Array process_allgather(const ProcessLayout& layout, std::span<const Array> host_values,
                        bool tiled = false);
// process_allgather of a global array: what every process gets. Across several processes only
// tiled=True, giving the global value; in one process the value, stacked on a new axis 0 unless
// tiled.
Array process_allgather(const Mesh& mesh, const ProcessLayout& layout, const GlobalArray& array,
                        bool tiled);

}  // namespace spmd
