#include "reference/global_array.h"

#include <fmt/format.h>

namespace spmd {

GlobalArray GlobalArray::from_value(const Array& value, const PartitionSpec& spec,
                                    const Mesh& mesh) {
  validate_spec(spec, mesh, "spec");
  shard_shape(value.shape(), spec, mesh, "value");
  GlobalArray out{value.shape(), value.dtype(), spec, {}};
  for (int device = 0; device < mesh.device_count(); ++device) {
    out.blocks.push_back(device_block(value, spec, mesh, device));
  }
  return out;
}

Array GlobalArray::value(const Mesh& mesh) const {
  return assemble_global(blocks, spec, mesh);
}

BlockIndex block_index_of(const Shape& shape, const PartitionSpec& spec, const Mesh& mesh,
                          int device) {
  const std::vector<int> coords = mesh.coordinates(device);
  BlockIndex index;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    const std::int64_t length = shape[static_cast<std::size_t>(d)] / block_count(spec, mesh, d);
    const std::int64_t start = block_index(spec, mesh, d, coords) * length;
    index.push_back({start, start + length});
  }
  return index;
}

Shape shard_shape(const Shape& shape, const PartitionSpec& spec, const Mesh& mesh,
                  const std::string& field) {
  if (spec.length() > static_cast<int>(shape.size())) {
    throw Error(fmt::format("{}: shape {} has rank {}, expected at least {} for the sharding {}",
                            field, shape_to_string(shape), shape.size(), spec.length(),
                            spec.to_string()));
  }
  Shape out = shape;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    const std::int64_t count = block_count(spec, mesh, d);
    if (shape[static_cast<std::size_t>(d)] % count != 0) {
      throw Error(fmt::format(
          "{}: shape {}, expected dimension {} ({}) divisible by {}, its block count under {} "
          "on {}",
          field, shape_to_string(shape), d, shape[static_cast<std::size_t>(d)], count,
          spec.to_string(), mesh.to_string()));
    }
    out[static_cast<std::size_t>(d)] /= count;
  }
  return out;
}

std::vector<GlobalArray> run_shard_map_global(Backend& backend, const Mesh& mesh,
                                              const DeviceFunction& function,
                                              const ShardMapOptions& options,
                                              const std::vector<GlobalArray>& args) {
  if (DeviceScope::active()) {
    throw Error("shard_map called inside a pmap or shard_map body: nested maps are not supported");
  }
  if (mesh.device_count() > backend.device_count()) {
    throw Error(fmt::format("shard_map: mesh {} needs {} devices but backend '{}' has {}",
                            mesh.to_string(), mesh.device_count(), backend.name(),
                            backend.device_count()));
  }
  // The checks of single-process shard_map, on the arguments' global values; then each
  // argument whose sharding is the in_spec passes its own blocks (replicas that differ stay
  // different, as on the hosts that loaded them).
  Values values;
  for (const GlobalArray& arg : args) values.push_back(arg.value(mesh));
  std::vector<Values> inputs = split_by_specs(mesh, options, values);
  for (std::size_t k = 0; k < args.size(); ++k) {
    const auto& spec = options.in_specs[k];
    if (!spec || !(*spec == args[k].spec)) continue;
    for (int device = 0; device < mesh.device_count(); ++device) {
      Array& block = inputs[static_cast<std::size_t>(device)][k];
      block = args[k].blocks[static_cast<std::size_t>(device)].with_varying_axes(
          block.varying_axes());
    }
  }
  const std::vector<Values> outputs = backend.run(mesh, inputs, function, options.check_vma);
  const Values global = assemble_by_specs(mesh, options, outputs);  // checks, and the shapes
  std::vector<GlobalArray> result;
  for (std::size_t j = 0; j < global.size(); ++j) {
    GlobalArray out{global[j].shape(), global[j].dtype(), options.out_specs[j], {}};
    for (const Values& device_outputs : outputs) {
      out.blocks.push_back(device_outputs[j].as_stored().with_varying_axes(0));
    }
    result.push_back(std::move(out));
  }
  return result;
}

}  // namespace spmd
