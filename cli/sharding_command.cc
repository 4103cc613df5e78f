#include "cli/sharding_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reference/error.h"
#include "reference/sharding_grid.h"
#include "reference/sharding_text.h"

namespace spmd {

void add_sharding_flags(CLI::App& command, ShardingOptions& options) {
  command.add_option("--mesh", options.mesh, "The mesh's axis sizes joined by 'x' (2x4)")
      ->required();
  command.add_option("--names", options.names, "The mesh's axis names joined by ',' (data,model)")
      ->required();
  command
      .add_option("--spec", options.spec,
                  "The PartitionSpec: per dimension None, an axis or (axis,axis), joined by ','")
      ->capture_default_str();
  command.add_option("--shape", options.shape, "The array's shape, 1-D or 2-D (16,8)")
      ->required();
  command.add_option("--devices", options.devices,
                     "The devices the mesh is made of (jax.make_mesh checks that they are as many "
                     "as its axes' product; default: that product)")
      ->check(CLI::Range(1, 1 << 20));
}

int run_sharding_command(const ShardingOptions& options, std::ostream& out) {
  const Mesh mesh = parse_mesh(options.mesh, options.names, "--mesh", "--names");
  if (options.devices != 0 && options.devices != mesh.device_count()) {
    throw Error(fmt::format("--devices: {}, expected the {} devices of --mesh {} (the product of "
                            "its axis sizes)",
                            options.devices, mesh.device_count(), options.mesh));
  }
  const PartitionSpec spec = parse_partition_spec(options.spec, "--spec");
  const std::vector<std::int64_t> shape = parse_array_shape(options.shape, "--shape");
  check_drawable_sharding(mesh, spec, shape,
                          {.mesh = "--mesh", .spec = "--spec", .shape = "--shape"});
  out << fmt::format("array {}, {} on {}:\n", fmt::join(shape, "x"), spec.to_string(),
                     mesh.to_string())
      << sharding_grid_text(block_grid(mesh, spec, shape));
  return 0;
}

}  // namespace spmd
