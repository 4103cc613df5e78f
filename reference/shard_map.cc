#include "reference/shard_map.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace spmd {
namespace {

std::string axes_set_string(const Mesh& mesh, VaryingAxes mask) {
  std::vector<std::string> names;
  for (int k = 0; k < mesh.axis_count(); ++k) {
    if (mask >> k & 1) names.push_back(mesh.axis_names()[static_cast<std::size_t>(k)]);
  }
  return fmt::format("{{{}}}", fmt::join(names, ", "));
}

void check_rank(const ShardMapOptions& options, const PartitionSpec& spec, const Array& value,
                const std::string& field, const std::string& what) {
  if (spec.length() <= value.rank()) return;
  std::string message = fmt::format(
      "shard_map applied to the function '{0}' was given an {1} entry which is too long to be "
      "compatible with the corresponding {2}: {1} is {3} which has length {4}, but the value has "
      "shape {5}, which has rank {6} (and {6} < {4}).",
      options.function_name, field, what, spec.to_string(), spec.length(), value.type_string(),
      value.rank());
  if (value.rank() == 0) {
    message += " For scalar values (rank 0), consider using an in_specs entry of `P()`.";
  }
  throw Error(message);
}

void check_divisible(const ShardMapOptions& options, const Mesh& mesh, const PartitionSpec& spec,
                     const Array& value, std::size_t index) {
  for (int d = 0; d < value.rank(); ++d) {
    const std::int64_t blocks = block_count(spec, mesh, d);
    if (value.dim(d) % blocks == 0) continue;
    const SpecEntry& entry = spec.entry(d);
    const std::string axes =
        entry.size() == 1
            ? fmt::format("mesh axis '{}' (of size {})", entry[0], blocks)
            : fmt::format("mesh axes {} (of total size {})", AxisNames(entry).to_string(), blocks);
    throw Error(fmt::format(
        "shard_map applied to the function '{0}' was given argument arrays with axis sizes that "
        "are not evenly divisible by the corresponding mesh axis sizes: args[{1}] of shape {2} "
        "corresponds to in_specs[{1}] of value {3}, which maps array axis {4} (of size {5}) to "
        "{6}, but {7} does not evenly divide {5} (not divisible; mesh {8})",
        options.function_name, index, value.type_string(), spec.to_string(), d, value.dim(d), axes,
        blocks, mesh.to_string()));
  }
}

void check_replication(const ShardMapOptions& options, const Mesh& mesh, const PartitionSpec& spec,
                       VaryingAxes varying, std::size_t index) {
  const VaryingAxes named = spec.named_axes_mask(mesh);
  const VaryingAxes unproven = varying & ~named;
  if (unproven == 0) return;
  throw Error(fmt::format(
      "shard_map applied to the function '{}' was given out_specs which require replication which "
      "can't be statically inferred given the mesh {}: out_specs[{}] is {} which implies that the "
      "corresponding output value is replicated across mesh axes {}, but it was inferred to be "
      "possibly varying over {}. If the values are meant to be replicated, pass check_vma=False.",
      options.function_name, mesh.to_string(), index, spec.to_string(),
      axes_set_string(mesh, unproven), axes_set_string(mesh, varying)));
}

}  // namespace

std::vector<Values> split_by_specs(const Mesh& mesh, const ShardMapOptions& options,
                                   const Values& args) {
  if (options.in_specs.size() != args.size()) {
    throw Error(fmt::format(
        "shard_map in_specs has {} entries but '{}' was given {} arguments, expected one spec per "
        "argument",
        options.in_specs.size(), options.function_name, args.size()));
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!options.in_specs[i]) continue;
    const std::string field = fmt::format("in_specs[{}]", i);
    validate_spec(*options.in_specs[i], mesh, field);
    check_rank(options, *options.in_specs[i], args[i], field, "input value");
    check_divisible(options, mesh, *options.in_specs[i], args[i], i);
  }
  std::vector<Values> per_device(static_cast<std::size_t>(mesh.device_count()));
  for (int device = 0; device < mesh.device_count(); ++device) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const auto& spec = options.in_specs[i];
      per_device[static_cast<std::size_t>(device)].push_back(
          spec ? device_block(args[i], *spec, mesh, device)
                     .with_varying_axes(spec->named_axes_mask(mesh))
               : args[i].with_varying_axes(0));
    }
  }
  return per_device;
}

Values assemble_by_specs(const Mesh& mesh, const ShardMapOptions& options,
                         const std::vector<Values>& per_device) {
  const std::size_t count = options.out_specs.size();
  const Values& first = per_device.front();
  if (first.size() != count) {
    throw Error(fmt::format(
        "shard_map out_specs has {} entries but '{}' returned {} values, expected one spec per "
        "output",
        count, options.function_name, first.size()));
  }
  Values outputs;
  for (std::size_t j = 0; j < count; ++j) {
    const PartitionSpec& spec = options.out_specs[j];
    const std::string field = fmt::format("out_specs[{}]", j);
    validate_spec(spec, mesh, field);
    std::vector<Array> blocks;
    VaryingAxes varying = 0;
    for (const Values& device_outputs : per_device) {
      const Array& block = device_outputs.at(j);
      if (block.dtype() != first[j].dtype() || block.shape() != first[j].shape()) {
        throw Error(fmt::format(
            "shard_map: output {} is {} on one device and {} on device 0, expected the same type "
            "on every device",
            j, block.type_string(), first[j].type_string()));
      }
      varying |= block.varying_axes();
      blocks.push_back(block);
    }
    check_rank(options, spec, first[j], field, "output value");
    if (options.check_vma) check_replication(options, mesh, spec, varying, j);
    outputs.push_back(assemble_global(blocks, spec, mesh).with_varying_axes(0));
  }
  return outputs;
}

Values run_shard_map(Backend& backend, const Mesh& mesh, const DeviceFunction& function,
                     const ShardMapOptions& options, const Values& args) {
  if (DeviceScope::active()) {
    throw Error(
        "shard_map called inside a pmap or shard_map body: nested maps are not supported "
        "(JAX requires the context mesh to match the mesh passed to shard_map)");
  }
  if (mesh.device_count() > backend.device_count()) {
    throw Error(fmt::format("shard_map: mesh {} needs {} devices but backend '{}' has {}",
                            mesh.to_string(), mesh.device_count(), backend.name(),
                            backend.device_count()));
  }
  const std::vector<Values> inputs = split_by_specs(mesh, options, args);
  const std::vector<Values> outputs = backend.run(mesh, inputs, with_jax_version(function, options.jax_version), options.check_vma);
  return assemble_by_specs(mesh, options, outputs);
}

std::function<Values(Backend&, const Values&)> shard_map(DeviceFunction function, Mesh mesh,
                                                         ShardMapOptions options) {
  return [function = std::move(function), mesh = std::move(mesh), options = std::move(options)](
             Backend& backend, const Values& args) {
    return run_shard_map(backend, mesh, function, options, args);
  };
}

}  // namespace spmd
