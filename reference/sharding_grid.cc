#include "reference/sharding_grid.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "reference/error.h"

namespace spmd {
namespace {

// jax/_src/debugging.py visualize_sharding's defaults: a box is base_height * (its share of
// dimension 0) lines high and base_width * 2.5 * (its share of dimension 1) characters wide,
// clamped to [9, 80]; base_width = base_height * columns / rows of the array.
constexpr int kBaseHeight = 10;
constexpr double kHeightToWidthRatio = 2.5;
constexpr int kMinWidth = 9;
constexpr int kMaxWidth = 80;

std::string shape_text(const std::vector<std::int64_t>& shape) {
  return fmt::format("{}", fmt::join(shape, ","));
}

std::string axes_text(const SpecEntry& entry) {
  return fmt::format("('{}'{})", fmt::join(entry, "', '"), entry.size() == 1 ? "," : "");
}

std::string label(const std::vector<int>& devices) {
  return fmt::format("{}", fmt::join(devices, ","));
}

// Characters between a box's side bars: JAX's width less its 2 padding columns, widened to hold
// the label.
int box_width(const BlockGrid& grid, std::size_t column, std::size_t widest_label) {
  const std::int64_t rows = grid.shape[0];
  const std::int64_t columns = grid.shape.size() == 2 ? grid.shape[1] : 1;
  const int base_width =
      static_cast<int>(kBaseHeight * (static_cast<double>(columns) / static_cast<double>(rows)));
  const double share = static_cast<double>(grid.column_sizes[column]) /
                       static_cast<double>(grid.shape.back());
  const int width = std::clamp(static_cast<int>(share * base_width * kHeightToWidthRatio),
                               kMinWidth, kMaxWidth);
  return std::max(width - 2, static_cast<int>(widest_label));
}

// Lines between a box's top and bottom rules: JAX's height less one (a rank-1 array: one line).
int box_lines(const BlockGrid& grid, std::size_t row) {
  if (grid.shape.size() == 1) return 1;
  const double share =
      static_cast<double>(grid.row_sizes[row]) / static_cast<double>(grid.shape[0]);
  return std::max(1, static_cast<int>(share * kBaseHeight) - 1);
}

std::string rule(const std::vector<int>& widths) {
  std::string line = "+";
  for (int w : widths) line += std::string(static_cast<std::size_t>(w), '-') + "+";
  return line + "\n";
}

std::string centered(const std::string& text, int width) {
  const int left = (width - static_cast<int>(text.size())) / 2;
  const int right = width - static_cast<int>(text.size()) - left;
  return std::string(static_cast<std::size_t>(left), ' ') + text +
         std::string(static_cast<std::size_t>(right), ' ');
}

}  // namespace

void check_drawable_sharding(const Mesh& mesh, const PartitionSpec& spec,
                             const std::vector<std::int64_t>& shape, const ShardingFields& fields) {
  const int rank = static_cast<int>(shape.size());
  if (rank < 1 || rank > 2) {
    throw Error(fmt::format("{}: {} has rank {}, expected rank 1 or 2 (the grid draws 1-D and 2-D "
                            "arrays, as jax.debug.visualize_sharding does)",
                            fields.shape, shape_text(shape), rank));
  }
  if (spec.length() > rank) {
    throw Error(fmt::format("{}: {} has {} entries, expected at most {}, the rank of {} {}",
                            fields.spec, spec.to_string(), spec.length(), rank, fields.shape,
                            shape_text(shape)));
  }
  // Every device is listed in its block's box: past a million devices the grid is no glance
  // (and would take minutes to lay out).
  constexpr int kMostDrawnDevices = 1 << 20;
  if (mesh.device_count() > kMostDrawnDevices) {
    throw Error(fmt::format("{}: {} devices, expected at most {} for a grid drawn device by device",
                            fields.mesh, mesh.device_count(), kMostDrawnDevices));
  }
  validate_spec(spec, mesh, fields.spec);
  for (int d = 0; d < rank; ++d) {
    const std::int64_t blocks = block_count(spec, mesh, d);
    if (shape[static_cast<std::size_t>(d)] % blocks != 0) {
      throw Error(fmt::format(
          "{}: dimension {} of {} is {}, split over mesh axes {} of {} devices by {} {}, "
          "expected a multiple of {}",
          fields.shape, d, shape_text(shape), shape[static_cast<std::size_t>(d)],
          axes_text(spec.entry(d)), blocks, fields.spec, spec.to_string(), blocks));
    }
  }
}

BlockGrid block_grid(const Mesh& mesh, const PartitionSpec& spec,
                     const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> tile_counts;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    tile_counts.push_back(block_count(spec, mesh, d));
  }
  std::vector<std::vector<std::int64_t>> device_tiles;
  for (int device = 0; device < mesh.device_count(); ++device) {
    std::vector<std::int64_t> tile;
    for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
      tile.push_back(block_index(spec, mesh, d, mesh.coordinates(device)));
    }
    device_tiles.push_back(std::move(tile));
  }
  return block_grid_from_tiles(shape, tile_counts, device_tiles);
}

BlockGrid block_grid_from_tiles(const std::vector<std::int64_t>& shape,
                                const std::vector<std::int64_t>& tile_counts,
                                const std::vector<std::vector<std::int64_t>>& device_tiles) {
  BlockGrid grid{.shape = shape};
  // Sizes of the tiles of a dimension of `length` elements cut into `count` tiles.
  auto sizes = [](std::int64_t length, std::int64_t count) {
    const std::int64_t tile = (length + count - 1) / count;
    std::vector<std::int64_t> result;
    for (std::int64_t start = 0; start < length; start += tile) {
      result.push_back(std::min(tile, length - start));
    }
    return result;
  };
  const bool one_row = shape.size() == 1;
  grid.row_sizes = one_row ? std::vector<std::int64_t>{1} : sizes(shape[0], tile_counts[0]);
  grid.column_sizes = sizes(shape.back(), tile_counts.back());
  grid.holders.assign(grid.row_sizes.size(),
                      std::vector<std::vector<int>>(grid.column_sizes.size()));
  for (std::size_t device = 0; device < device_tiles.size(); ++device) {
    const std::vector<std::int64_t>& tile = device_tiles[device];
    const std::int64_t row = one_row ? 0 : tile[0];
    // Tiles past the array's end (XLA pads them) hold no elements: no box.
    if (row >= static_cast<std::int64_t>(grid.row_sizes.size()) ||
        tile.back() >= static_cast<std::int64_t>(grid.column_sizes.size())) {
      continue;
    }
    grid.holders[static_cast<std::size_t>(row)][static_cast<std::size_t>(tile.back())].push_back(
        static_cast<int>(device));
  }
  return grid;
}

std::string sharding_grid_text(const BlockGrid& grid) {
  std::vector<int> widths;
  for (std::size_t c = 0; c < grid.column_sizes.size(); ++c) {
    std::size_t widest_label = 0;
    for (const auto& row : grid.holders) widest_label = std::max(widest_label, label(row[c]).size());
    widths.push_back(box_width(grid, c, widest_label));
  }
  std::string text = rule(widths);
  for (std::size_t r = 0; r < grid.holders.size(); ++r) {
    const int lines = box_lines(grid, r);
    const int label_line = (lines - 1) / 2;  // JAX centres the label, the extra line below
    for (int line = 0; line < lines; ++line) {
      text += "|";
      for (std::size_t c = 0; c < widths.size(); ++c) {
        text += centered(line == label_line ? label(grid.holders[r][c]) : "", widths[c]) + "|";
      }
      text += "\n";
    }
    text += rule(widths);
  }
  return text;
}

}  // namespace spmd
