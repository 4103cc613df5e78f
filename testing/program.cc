#include "testing/program.h"

#include <fmt/format.h>

#include "reference/check.h"
#include "reference/partition_spec.h"

namespace spmd::testkit {
namespace {

std::string device_element_words(int device, const Shape& local_index) {
  return fmt::format("device {}, element {}", device, shape_to_string(local_index));
}

// Under shard_map: the first device whose block of the output holds `index`.
std::string shard_map_device_element(const Program& program, const ShardMapOptions& options,
                                     int output, const Shape& output_shape, const Shape& index) {
  const PartitionSpec& spec = options.out_specs.at(static_cast<std::size_t>(output));
  const Mesh& mesh = program.mesh;
  for (int device = 0; device < mesh.device_count(); ++device) {
    const std::vector<int> coordinates = mesh.coordinates(device);
    Shape local = index;
    bool holds = true;
    for (std::size_t d = 0; d < index.size(); ++d) {
      const int dimension = static_cast<int>(d);
      const std::int64_t block_dim = output_shape[d] / block_count(spec, mesh, dimension);
      holds = holds && index[d] / block_dim == block_index(spec, mesh, dimension, coordinates);
      local[d] = index[d] % block_dim;
    }
    if (holds) return device_element_words(device, local);
  }
  SPMD_UNREACHABLE("every element of a shard_map output is held by some device");
}

// Under pmap: the output's out_axis counts devices; out_axes None is device 0's result.
std::string pmap_device_element(const PmapOptions& options, int output, const Shape& index) {
  const std::optional<int> axis =
      options.out_axes.empty() ? 0 : options.out_axes.at(static_cast<std::size_t>(output));
  if (!axis) return device_element_words(0, index);
  Shape local = index;
  local.erase(local.begin() + *axis);
  return device_element_words(static_cast<int>(index.at(static_cast<std::size_t>(*axis))), local);
}

}  // namespace

Values run_program(Backend& backend, const Program& program) {
  if (const auto* options = std::get_if<ShardMapOptions>(&program.mapping)) {
    return run_shard_map(backend, program.mesh, program.function, *options, program.inputs);
  }
  return run_pmap(backend, program.function, std::get<PmapOptions>(program.mapping),
                  program.inputs);
}

std::string device_element(const Program& program, int output, const Shape& output_shape,
                           const Shape& index) {
  SPMD_CHECK(index.size() == output_shape.size(), "an index names every dimension");
  if (const auto* options = std::get_if<ShardMapOptions>(&program.mapping)) {
    return shard_map_device_element(program, *options, output, output_shape, index);
  }
  return pmap_device_element(std::get<PmapOptions>(program.mapping), output, index);
}

}  // namespace spmd::testkit
