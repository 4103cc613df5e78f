#include "reference/multi_process.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "reference/elementwise.h"

namespace spmd {
namespace {

// JAX with x64 off (its default) makes host data 32-bit (dtypes.canonicalize_value).
Array canonicalize(const Array& a) {
  if (a.dtype() == DType::float64) return convert(a, DType::float32);
  if (a.dtype() == DType::int64) return convert(a, DType::int32);
  return a;
}

void check_process_count(const ProcessLayout& layout, std::size_t given, const char* what) {
  if (static_cast<int>(given) == layout.process_count()) return;
  throw Error(fmt::format("{}: {} entries, expected one per process ({})", what, given,
                          layout.process_count()));
}

std::string index_string(const BlockIndex& index) {
  std::vector<std::string> each;
  for (const IndexRange& range : index) each.push_back(fmt::format("{}:{}", range.start, range.stop));
  return fmt::format("[{}]", fmt::join(each, ", "));
}

bool fully_replicated(const PartitionSpec& spec, const Mesh& mesh, int rank) {
  for (int d = 0; d < rank; ++d) {
    if (block_count(spec, mesh, d) != 1) return false;
  }
  return true;
}

// How many distinct parts of dimension `dim` the processes hold (sharding_impls.py
// get_process_index_and_count), or nullopt where the sharding is not uniform across processes
// along it: processes holding different numbers of blocks, or overlapping sets of them.
std::optional<std::int64_t> process_shard_count(const Mesh& mesh, const ProcessLayout& layout,
                                                const PartitionSpec& spec, int dim, int rank) {
  if (layout.process_count() == 1 || fully_replicated(spec, mesh, rank)) return 1;
  std::vector<std::set<std::int64_t>> held(static_cast<std::size_t>(layout.process_count()));
  std::set<std::int64_t> all;
  for (int device = 0; device < mesh.device_count(); ++device) {
    const std::int64_t block = block_index(spec, mesh, dim, mesh.coordinates(device));
    held[static_cast<std::size_t>(layout.process_index(device))].insert(block);
    all.insert(block);
  }
  for (const auto& blocks : held) {
    if (blocks.size() != held.front().size()) return std::nullopt;
  }
  const std::set<std::set<std::int64_t>> unique(held.begin(), held.end());
  std::size_t covered = 0;
  for (const auto& blocks : unique) covered += blocks.size();
  if (covered != all.size()) return std::nullopt;
  return static_cast<std::int64_t>(unique.size());
}

Shape inferred_global_shape(const Mesh& mesh, const ProcessLayout& layout,
                            const PartitionSpec& spec, const Shape& local,
                            const std::string& field) {
  Shape global = local;
  const int rank = static_cast<int>(local.size());
  for (int d = 0; d < rank; ++d) {
    const std::optional<std::int64_t> count = process_shard_count(mesh, layout, spec, d, rank);
    if (!count) {
      throw Error(fmt::format(
          "{}: ValueError: Unable to compute global_shape due to non-uniform sharding: the "
          "processes hold different parts of dimension {} under {} with processes {}, expected a "
          "global shape given",
          field, d, spec.to_string(), layout.to_string()));
    }
    global[static_cast<std::size_t>(d)] *= *count;
  }
  return global;
}

// Every process must describe the same global array.
void check_same_global(const Shape& global, DType dtype, const GlobalArray& first, int process,
                       const std::string& field) {
  if (process == 0) return;
  if (global != first.shape || dtype != first.dtype) {
    throw Error(fmt::format(
        "{}: gives a global array {}{}, expected {}{} as process 0's data gives: every process "
        "describes the same global array",
        field, dtype_name(dtype), shape_string(global), dtype_name(first.dtype),
        shape_string(first.shape)));
  }
}

void check_rank(const PartitionSpec& spec, const Array& local, const std::string& field) {
  if (spec.length() <= local.rank()) return;
  throw Error(fmt::format("{}: {}, expected rank at least {} for the sharding {}", field,
                          local.type_string(), spec.length(), spec.to_string()));
}

}  // namespace

std::string default_process_field(int process) { return fmt::format("local_data[{}]", process); }

GlobalArray make_array_from_callback(const Mesh& mesh, const ProcessLayout& layout,
                                     const Shape& shape, const PartitionSpec& spec,
                                     const BlockCallback& callback, const ProcessField& field) {
  validate_spec(spec, mesh, "spec");
  const Shape expected = shard_shape(shape, spec, mesh, "shape");
  GlobalArray out{shape, DType::float32, spec,
                  std::vector<Array>(static_cast<std::size_t>(mesh.device_count()))};
  std::optional<DType> dtype;
  for (int process = 0; process < layout.process_count(); ++process) {
    for (int device : layout.local_devices(process)) {
      const BlockIndex index = block_index_of(shape, spec, mesh, device);
      const Array block = canonicalize(callback(process, index));
      if (dtype && block.dtype() != *dtype) {
        throw Error(fmt::format(
            "{}: block {} for device {} is {}, expected dtype {} as the other blocks (ValueError: "
            "Input buffers to `Array` must have matching dtypes)",
            field(process), index_string(index), device, block.type_string(), dtype_name(*dtype)));
      }
      if (block.shape() != expected) {
        throw Error(fmt::format(
            "{}: block {} for device {} has shape {}, expected the shard shape {} (ValueError: "
            "Expected shard shape {} doesn't match the single device array shape {}; the array "
            "is {} sharded {} over {})",
            field(process), index_string(index), device, shape_to_string(block.shape()),
            shape_to_string(expected), shape_to_string(expected), shape_to_string(block.shape()),
            shape_string(shape), spec.to_string(), mesh.to_string()));
      }
      dtype = block.dtype();
      out.blocks[static_cast<std::size_t>(device)] = block;
    }
  }
  out.dtype = dtype.value_or(DType::float32);
  return out;
}

namespace {

// What both host-data constructors start from: one entry of local data per process, a spec
// the mesh has, and an array with a block slot per device.
GlobalArray empty_global_array(const Mesh& mesh, const ProcessLayout& layout,
                               const PartitionSpec& spec, std::span<const Array> local_data) {
  check_process_count(layout, local_data.size(), "local_data");
  validate_spec(spec, mesh, "spec");
  return GlobalArray{{}, DType::float32, spec,
                     std::vector<Array>(static_cast<std::size_t>(mesh.device_count()))};
}

// Process `process`'s local data, canonicalized, of a rank the spec fits.
Array checked_local_data(const PartitionSpec& spec, std::span<const Array> local_data,
                         int process, const std::string& name) {
  Array local = canonicalize(local_data[static_cast<std::size_t>(process)]);
  check_rank(spec, local, name);
  return local;
}

// The first process sets the array's global shape and dtype; the others must agree.
void record_global_shape(const Shape& global, DType dtype, GlobalArray& out, int process,
                         const std::string& name) {
  if (process == 0) {
    out.shape = global;
    out.dtype = dtype;
  }
  check_same_global(global, dtype, out, process, name);
}

}  // namespace

GlobalArray make_array_from_process_local_data(const Mesh& mesh, const ProcessLayout& layout,
                                               const PartitionSpec& spec,
                                               std::span<const Array> local_data,
                                               const std::optional<Shape>& global_shape,
                                               const ProcessField& field) {
  GlobalArray out = empty_global_array(mesh, layout, spec, local_data);
  for (int process = 0; process < layout.process_count(); ++process) {
    const std::string name = field(process);
    const Array local = checked_local_data(spec, local_data, process, name);
    if (layout.process_count() == 1 && global_shape && *global_shape != local.shape()) {
      throw Error(fmt::format(
          "{}: shape {}, expected global_shape {}: in a single process the local data is the "
          "global array (ValueError: global_shape should be None or equal to local_data.shape)",
          name, shape_to_string(local.shape()), shape_to_string(*global_shape)));
    }
    if (global_shape && global_shape->size() != local.shape().size()) {
      throw Error(fmt::format("{}: shape {}, expected rank {} as global_shape {}", name,
                              shape_to_string(local.shape()), global_shape->size(),
                              shape_to_string(*global_shape)));
    }
    const Shape global = global_shape.value_or(
        inferred_global_shape(mesh, layout, spec, local.shape(), name));
    record_global_shape(global, local.dtype(), out, process, name);
    const Shape shard = shard_shape(global, spec, mesh, name + " (as global shape)");
    // Per dimension: the whole dimension, or the distinct block starts this process's devices
    // address, which lie one after another in its data.
    const std::size_t rank = global.size();
    std::vector<bool> full(rank);
    std::vector<std::vector<std::int64_t>> starts(rank);
    for (std::size_t d = 0; d < rank; ++d) {
      std::set<std::int64_t> distinct;
      for (int device : layout.local_devices(process)) {
        distinct.insert(block_index_of(global, spec, mesh, device)[d].start);
      }
      starts[d].assign(distinct.begin(), distinct.end());
      full[d] = local.shape()[d] == global[d];
      const std::int64_t addressed = shard[d] * static_cast<std::int64_t>(distinct.size());
      if (!full[d] && local.shape()[d] != addressed) {
        throw Error(fmt::format(
            "{}: shape {}, expected {} or {} in dimension {} (ValueError: Invalid host data, each "
            "dimension should match either global or process shape. In dimension {}, the process "
            "data has {} elements. Process addresses {} elements and global_shape={})",
            name, shape_to_string(local.shape()), global[d], addressed, d, d,
            local.shape()[d], addressed, shape_to_string(global)));
      }
    }
    for (int device : layout.local_devices(process)) {
      const BlockIndex index = block_index_of(global, spec, mesh, device);
      Array block = local;
      for (std::size_t d = 0; d < rank; ++d) {
        std::int64_t start = index[d].start;
        if (!full[d]) {
          const auto at = std::find(starts[d].begin(), starts[d].end(), index[d].start);
          start = (at - starts[d].begin()) * shard[d];
        }
        block = slice(block, static_cast<int>(d), start, start + shard[d]);
      }
      out.blocks[static_cast<std::size_t>(device)] = block;
    }
  }
  return out;
}

GlobalArray host_local_array_to_global_array(const Mesh& mesh, const ProcessLayout& layout,
                                             const PartitionSpec& spec,
                                             std::span<const Array> local_data,
                                             const ProcessField& field) {
  GlobalArray out = empty_global_array(mesh, layout, spec, local_data);
  for (int process = 0; process < layout.process_count(); ++process) {
    const std::string name = field(process);
    const Array local = checked_local_data(spec, local_data, process, name);
    const LocalMesh local_mesh_of = local_mesh(mesh, layout, process);
    // The local shape tiled over the local mesh, untiled over the global one (pxla.py
    // mesh_local_to_global).
    Shape global = shard_shape(local.shape(), spec, local_mesh_of.mesh,
                               name + " (over the process's local mesh " +
                                   local_mesh_of.mesh.to_string() + ")");
    for (int d = 0; d < local.rank(); ++d) {
      global[static_cast<std::size_t>(d)] *= block_count(spec, mesh, d);
    }
    record_global_shape(global, local.dtype(), out, process, name);
    for (int l = 0; l < local_mesh_of.mesh.device_count(); ++l) {
      out.blocks[static_cast<std::size_t>(local_mesh_of.global_device(mesh, l))] =
          device_block(local, spec, local_mesh_of.mesh, l);
    }
  }
  return out;
}

std::vector<Array> global_array_to_host_local_array(const Mesh& mesh, const ProcessLayout& layout,
                                                    const PartitionSpec& spec,
                                                    const GlobalArray& array) {
  validate_spec(spec, mesh, "spec");
  const GlobalArray source =
      array.spec == spec ? array : GlobalArray::from_value(array.value(mesh), spec, mesh);
  std::vector<Array> out;
  for (int process = 0; process < layout.process_count(); ++process) {
    const LocalMesh local_mesh_of = local_mesh(mesh, layout, process);
    std::vector<Array> blocks;
    for (int l = 0; l < local_mesh_of.mesh.device_count(); ++l) {
      blocks.push_back(
          source.blocks[static_cast<std::size_t>(local_mesh_of.global_device(mesh, l))]);
    }
    out.push_back(assemble_global(blocks, spec, local_mesh_of.mesh));
  }
  return out;
}

Array process_allgather(const ProcessLayout& layout, std::span<const Array> host_values,
                        bool tiled) {
  check_process_count(layout, host_values.size(), "host_values");
  std::vector<Array> parts;
  for (int process = 0; process < layout.process_count(); ++process) {
    const Array value = canonicalize(host_values[static_cast<std::size_t>(process)]);
    const std::size_t devices = layout.local_devices(process).size();
    if (devices != layout.local_devices(0).size()) {
      throw Error(fmt::format(
          "processes: process {} has {} devices and process 0 {}, expected as many on every "
          "process (process_allgather reshapes jax.devices() to (process_count, "
          "local_device_count))",
          process, devices, layout.local_devices(0).size()));
    }
    if (process > 0 && (value.shape() != parts[0].shape() || value.dtype() != parts[0].dtype())) {
      throw Error(fmt::format("host_values[{}]: {}, expected {} as process 0's: each array must "
                              "have the same shape across the hosts",
                              process, value.type_string(), parts[0].type_string()));
    }
    parts.push_back(value);
  }
  const bool stack_them = !tiled || parts[0].rank() == 0;
  if (stack_them) {
    for (Array& part : parts) part = expand_dims(part, 0);
  }
  return concatenate(parts, 0);
}

Array process_allgather(const Mesh& mesh, const ProcessLayout& layout, const GlobalArray& array,
                        bool tiled) {
  const Array value = array.value(mesh);
  if (layout.process_count() == 1) return tiled ? value : expand_dims(value, 0);
  if (!tiled) {
    throw Error(
        "process_allgather: tiled=False, expected tiled=True for a global array across processes "
        "(ValueError: Gathering global non-fully-addressable arrays only supports tiled=True)");
  }
  return value;
}

}  // namespace spmd
