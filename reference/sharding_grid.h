#pragma once
// Which device holds which block of an array, drawn as a text grid, as JAX's
// jax.debug.visualize_sharding draws it (jax/_src/debugging.py): blocks of dimension 0 are rows,
// of dimension 1 columns (a rank-1 array is one row); each box is labelled with the ids of the
// devices holding it, ascending ("0,4": the block and its replica), and sized as JAX sizes it:
// 10 lines high for the whole array, 2.5 characters wide per line of the array's aspect ratio,
// at least 9 and at most 80 characters wide per box. Boxes are plain text ('+', '-', '|').

#include <cstdint>
#include <string>
#include <vector>

#include "reference/mesh.h"
#include "reference/partition_spec.h"

namespace spmd {

struct BlockGrid {
  std::vector<std::int64_t> shape;         // the global array's, rank 1 or 2
  std::vector<std::int64_t> row_sizes;     // elements of dimension 0 per row ({1} at rank 1)
  std::vector<std::int64_t> column_sizes;  // elements of the last dimension per column
  // holders[row][column]: the devices holding that block, ascending.
  std::vector<std::vector<std::vector<int>>> holders;
};

// The names a sharding's pieces go by in error messages: the CLI's flags, or a program's fields.
struct ShardingFields {
  std::string mesh = "mesh";
  std::string spec = "spec";
  std::string shape = "shape";
};

// spmd::Error, naming the field, the value and what was expected, unless `shape` can be laid out
// by `spec` on `mesh` and drawn: rank 1 or 2, a spec no longer than the rank, naming each mesh
// axis at most once, every dimension a multiple of its axes' device count.
void check_drawable_sharding(const Mesh& mesh, const PartitionSpec& spec,
                             const std::vector<std::int64_t>& shape, const ShardingFields& fields);

// The blocks of a `shape` array laid out by `spec` on `mesh` (checked by the caller).
BlockGrid block_grid(const Mesh& mesh, const PartitionSpec& spec,
                     const std::vector<std::int64_t>& shape);

// The blocks of a `shape` array cut into `tile_counts` tiles per dimension (XLA's tiling: each
// tile ceil(dim / count) long, the last one shorter), device d holding tile device_tiles[d]
// (one index per dimension). For shardings given as tiles rather than a mesh (HLO's).
BlockGrid block_grid_from_tiles(const std::vector<std::int64_t>& shape,
                                const std::vector<std::int64_t>& tile_counts,
                                const std::vector<std::vector<std::int64_t>>& device_tiles);

// The grid's text: one line per text row, each ending in '\n'.
std::string sharding_grid_text(const BlockGrid& grid);

}  // namespace spmd
