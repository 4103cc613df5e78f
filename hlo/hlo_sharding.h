#pragma once
// An HLO instruction's `sharding={...}` attribute (XLA's HloSharding text): which tile of the
// global array each device holds, read into a reference/sharding_grid.h grid; and the grids of a
// module's inputs and outputs for `spmdsim run --show-sharding` (docs/sharding.md).
//
// Forms read: {replicated}, {maximal device=N}, {devices=[t0,t1,...]<=[n]} and its transposed iota
// form <=[d0,d1]T(1,0), an explicit device list {devices=[2,2]0,2,1,3}, with
// last_tile_dim_replicate (the last tile dimension counts replicas) or last_tile_dims={...} (one
// trailing tile dimension per listed subgroup). Device ids are partition ids (a pmap module's:
// replica ids).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/hlo_module.h"

namespace spmd::hlo {

// A sharding of an array: tiles per array dimension, and per device the tile it holds (none: the
// device holds no part of it, as under {maximal}).
struct TileSharding {
  std::vector<std::int64_t> tile_counts;
  std::vector<std::vector<std::int64_t>> device_tiles;  // one per device; empty: holds nothing
};

// The sharding `text` ("{devices=[8,1]<=[8]}") of a rank-`rank` array on `devices` devices;
// spmd::Error naming `field` (the file and line) for a form the importer does not read.
TileSharding parse_tile_sharding(std::string_view text, int rank, int devices,
                                 const std::string& field);

// The text `spmdsim run --show-sharding` prints for `module`: per entry parameter, then per
// output, its global shape, sharding and grid (arrays of rank 1 and 2; others one line).
// A compiled module's arrays are per-device: the global shape is the per-device one times the
// tiles. A pmap module (replicas, no sharding attributes) stacks its replicas along a leading
// device axis, as pmap's in_axes=0 does.
std::string module_sharding_text(const HloModule& module);

}  // namespace spmd::hlo
