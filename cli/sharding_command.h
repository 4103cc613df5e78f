#pragma once
// `spmdsim sharding --mesh 2x4 --names data,model --spec 'data,None' --shape 16,8`: which device
// holds which block of an array, drawn as jax.debug.visualize_sharding draws it
// (reference/sharding_grid.h; docs/sharding.md).

#include <cstdint>
#include <ostream>
#include <string>

#include "cli/cli11_fwd.h"

namespace spmd {

struct ShardingOptions {
  std::string mesh;   // "2x4"
  std::string names;  // "data,model"
  std::string spec = "None";
  std::string shape;  // "16,8"
  int devices = 0;    // the devices the mesh is made of; 0: its axes' product
};

void add_sharding_flags(CLI::App& command, ShardingOptions& options);
int run_sharding_command(const ShardingOptions& options, std::ostream& out);

}  // namespace spmd
