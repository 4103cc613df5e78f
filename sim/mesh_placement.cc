#include "sim/mesh_placement.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "reference/error.h"
#include "support/name_lists.h"

namespace spmd::sim {
namespace {

using Part = MeshPlacement::Part;
using Parts = std::vector<Part>;

std::vector<std::string> dimension_names(const topology::Topology& topology) {
  const std::size_t count = topology.dims().size();
  if (topology.kind() == "hierarchical") return {"inter", "intra"};
  std::vector<std::string> names = {"x", "y", "z"};
  names.resize(std::min(count, names.size()));
  return names;
}

[[noreturn]] void fail(const PlacementSpec& spec, const std::string& what) {
  throw Error(fmt::format("placement {}: {}", placement_text(spec), what));
}

// Each part's machine step (parts of one dimension, major first in list order) and mesh stride
// (parts in mesh order: by axis, major first).
Parts with_strides(Parts parts) {
  std::stable_sort(parts.begin(), parts.end(),
                   [](const Part& a, const Part& b) { return a.axis < b.axis; });
  int stride = 1;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    it->mesh_stride = stride;
    stride *= it->size;
  }
  return parts;
}

// Steps of `parts` listed major first within each dimension.
void set_steps(Parts& parts) {
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    it->step = 1;
    for (auto later = parts.rbegin(); later != it; ++later) {
      if (later->dim == it->dim) it->step *= later->size;
    }
  }
}

// ---- Explicit axes: data=y,model=x

int dimension_index(const PlacementSpec& spec, const std::string& name,
                    const std::vector<std::string>& names, const topology::Topology& topology) {
  const int count = static_cast<int>(topology.dims().size());
  if (count == 0) {
    fail(spec, fmt::format("the machine {} has no dimensions to place mesh axes along, expected "
                           "a torus, mesh or hierarchical machine (or devices:...)",
                           topology.name()));
  }
  for (int k = 0; k < count; ++k) {
    if (name == names[static_cast<std::size_t>(k)] || name == std::to_string(k)) return k;
  }
  const std::vector<std::string_view> expected(names.begin(), names.end());
  fail(spec, fmt::format("the machine {} has no dimension {}, expected {} (or 0 to {})",
                         topology.name(), name, or_list(expected), count - 1));
}

// Fills in the sizes of parts without one and checks each dimension's parts fit in it.
void size_parts(const PlacementSpec& spec, Parts& parts, const std::vector<int>& dims,
                const std::vector<std::string>& names) {
  for (std::size_t k = 0; k < dims.size(); ++k) {
    int sized = 1;
    int unsized = 0;
    for (const Part& p : parts) {
      if (p.dim != static_cast<int>(k)) continue;
      if (p.size == 0) ++unsized;
      else sized *= p.size;
    }
    const std::string dim = fmt::format("dimension {} (size {})", names[k], dims[k]);
    if (unsized > 1)
      fail(spec, fmt::format("{} has {} parts without a size, expected at most one", dim, unsized));
    if (unsized == 1 && dims[k] % sized != 0) {
      fail(spec, fmt::format("{} does not split into parts of {}, expected sizes that divide it",
                             dim, sized));
    }
    if (sized > dims[k]) {
      fail(spec, fmt::format("{} is given parts of {} coordinates, expected at most {}", dim, sized,
                             dims[k]));
    }
    for (Part& p : parts) {
      if (p.dim == static_cast<int>(k) && p.size == 0) p.size = dims[k] / sized;
    }
  }
}

void check_axis_sizes(const PlacementSpec& spec, const Parts& parts, const Mesh& mesh) {
  for (int a = 0; a < mesh.axis_count(); ++a) {
    int product = 1;
    for (const Part& p : parts) {
      if (p.axis == a) product *= p.size;
    }
    const int size = mesh.shape()[static_cast<std::size_t>(a)];
    const std::string& name = mesh.axis_names()[static_cast<std::size_t>(a)];
    if (product == size) continue;
    if (product == 1) {
      fail(spec, fmt::format("mesh axis {} (size {}) is not placed, expected every axis of "
                             "{} larger than 1 to be placed",
                             name, size, mesh.to_string()));
    }
    fail(spec, fmt::format("mesh axis {} (size {}) is placed on {} coordinates, expected "
                           "parts whose sizes multiply to {}",
                           name, size, product, size));
  }
}

Parts explicit_parts(const PlacementSpec& spec, const Mesh& mesh,
                     const topology::Topology& topology) {
  const std::vector<std::string> names = dimension_names(topology);
  Parts parts;  // in the order given: each dimension's parts major first
  for (const AxisPlacement& axis : spec.axes) {
    const int a = mesh.find_axis(axis.axis);
    if (a < 0) {
      std::vector<std::string_view> axes(mesh.axis_names().begin(), mesh.axis_names().end());
      fail(spec, fmt::format("mesh {} has no axis {}, expected {}", mesh.to_string(), axis.axis,
                             or_list(axes)));
    }
    for (const DimPart& part : axis.parts) {
      parts.push_back(
          {.axis = a, .dim = dimension_index(spec, part.dim, names, topology), .size = part.size});
    }
  }
  size_parts(spec, parts, topology.dims(), names);
  check_axis_sizes(spec, parts, mesh);
  set_steps(parts);
  return with_strides(std::move(parts));
}

// ---- Row-major, and create_device_mesh's default on tori

// Row-major as parts: the last mesh axis takes the last dimension's coordinates first. None
// where an axis and a dimension do not divide one another.
std::optional<Parts> row_major_parts(const Mesh& mesh, const std::vector<int>& dims) {
  if (dims.empty()) return std::nullopt;
  std::vector<int> left = dims;  // coordinates of each dimension not yet given out
  std::vector<int> step(dims.size(), 1);
  int k = static_cast<int>(dims.size()) - 1;
  Parts parts;
  for (int a = mesh.axis_count() - 1; a >= 0; --a) {
    int size = mesh.shape()[static_cast<std::size_t>(a)];
    Parts axis_parts;  // minor first
    while (size > 1) {
      if (k < 0) return std::nullopt;
      const auto kk = static_cast<std::size_t>(k);
      const int take = left[kk] == 1          ? 0
                       : size % left[kk] == 0 ? left[kk]
                       : left[kk] % size == 0 ? size
                                              : -1;
      if (take < 0) return std::nullopt;
      if (take == 0) {
        --k;
        continue;
      }
      axis_parts.push_back({.axis = a, .dim = k, .size = take, .step = step[kk]});
      step[kk] *= take;
      left[kk] /= take;
      size /= take;
    }
    parts.insert(parts.begin(), axis_parts.rbegin(), axis_parts.rend());
  }
  return with_strides(std::move(parts));
}

// What is left of the machine's dimensions while axes take pieces of them: a dimension's pieces
// are given out minor first, so the next piece's step is the product of those given before.
struct FreeDims {
  std::vector<int> left;   // coordinates not yet given out, per dimension
  std::vector<int> given;  // product of the pieces given out, per dimension

  Part take(int axis, int k, int size) {
    const auto kk = static_cast<std::size_t>(k);
    const Part part{.axis = axis, .dim = k, .size = size, .step = given[kk]};
    given[kk] *= size;
    left[kk] /= size;
    return part;
  }
};

// The first set of dimensions with coordinates left, largest sets first, in lexicographic
// order (itertools.combinations), whose left sizes multiply to `size`; empty if none.
std::vector<int> whole_set(const FreeDims& free, int size) {
  const int count = static_cast<int>(free.left.size());
  for (int pick = std::min(3, count); pick >= 1; --pick) {
    std::vector<int> subset(static_cast<std::size_t>(pick));
    std::iota(subset.begin(), subset.end(), 0);
    while (true) {
      int product = 1;
      bool usable = true;
      for (int k : subset) {
        const int left = free.left[static_cast<std::size_t>(k)];
        product *= left;
        usable = usable && left > 1;
      }
      if (usable && product == size) return subset;
      int i = pick - 1;
      while (i >= 0 && subset[static_cast<std::size_t>(i)] == count - pick + i) --i;
      if (i < 0) break;
      ++subset[static_cast<std::size_t>(i)];
      for (int j = i + 1; j < pick; ++j) {
        subset[static_cast<std::size_t>(j)] = subset[static_cast<std::size_t>(j - 1)] + 1;
      }
    }
  }
  return {};
}

// The pieces of `size` coordinates for one axis: a whole set if one fits, else a piece of each
// dimension in turn (the common factor of what the axis still needs and what it has left).
std::optional<Parts> take_axis(FreeDims& free, int axis, int size) {
  Parts parts;
  const std::vector<int> set = whole_set(free, size);
  if (!set.empty()) {
    for (int k : set) parts.push_back(free.take(axis, k, free.left[static_cast<std::size_t>(k)]));
    return parts;
  }
  for (int k = 0; k < static_cast<int>(free.left.size()) && size > 1; ++k) {
    const int piece = std::gcd(size, free.left[static_cast<std::size_t>(k)]);
    if (piece == 1) continue;
    parts.push_back(free.take(axis, k, piece));
    size /= piece;
  }
  if (size != 1) return std::nullopt;
  return parts;
}

// jax.experimental.mesh_utils.create_device_mesh on a torus: the last axis first (the one with
// the most traffic), each taking the first set of free dimensions, largest sets first, whose
// sizes multiply to its size; where none fits, pieces of dimensions (as allow_split_physical_axes
// does). Inside an axis, strided pieces are major and pieces of step 1 minor, so the grid
// dimension a torus all-reduce scatters first is the best connected. None unless every axis
// finds its pieces and the mesh covers the machine.
std::optional<Parts> torus_default_parts(const Mesh& mesh, const std::vector<int>& dims) {
  FreeDims free{dims, std::vector<int>(dims.size(), 1)};
  Parts parts;
  for (int a = mesh.axis_count() - 1; a >= 0; --a) {
    std::optional<Parts> axis = take_axis(free, a, mesh.shape()[static_cast<std::size_t>(a)]);
    if (!axis) return std::nullopt;
    std::stable_sort(axis->begin(), axis->end(),
                     [](const Part& x, const Part& y) { return x.step > y.step; });
    parts.insert(parts.begin(), axis->begin(), axis->end());
  }
  for (int left : free.left) {
    if (left > 1) return std::nullopt;
  }
  return with_strides(std::move(parts));
}

std::vector<int> devices_of_parts(const Parts& parts, int mesh_devices,
                                  const std::vector<int>& dims) {
  std::vector<int> devices(static_cast<std::size_t>(mesh_devices));
  std::vector<int> coordinate(dims.size());
  for (int m = 0; m < mesh_devices; ++m) {
    std::fill(coordinate.begin(), coordinate.end(), 0);
    for (const Part& p : parts) {
      coordinate[static_cast<std::size_t>(p.dim)] += m / p.mesh_stride % p.size * p.step;
    }
    int device = 0;
    for (std::size_t k = 0; k < dims.size(); ++k) device = device * dims[k] + coordinate[k];
    devices[static_cast<std::size_t>(m)] = device;
  }
  return devices;
}

void check_device_list(const PlacementSpec& spec, const Mesh& mesh, int machine_devices) {
  if (spec.devices.size() != static_cast<std::size_t>(mesh.device_count())) {
    fail(spec, fmt::format("{} devices for mesh {}, expected one per mesh device ({})",
                           spec.devices.size(), mesh.to_string(), mesh.device_count()));
  }
  std::vector<bool> used(static_cast<std::size_t>(machine_devices), false);
  for (int device : spec.devices) {
    if (device >= machine_devices) {
      fail(spec, fmt::format("device {} is not on the machine, expected 0 to {}", device,
                             machine_devices - 1));
    }
    if (used[static_cast<std::size_t>(device)]) {
      fail(spec, fmt::format("device {} is listed twice, expected each machine device at most "
                             "once",
                             device));
    }
    used[static_cast<std::size_t>(device)] = true;
  }
}

}  // namespace

MeshPlacement::MeshPlacement(const PlacementSpec& spec, const Mesh& mesh,
                             const topology::Topology& topology)
    : machine_dims_(topology.dims()),
      dim_names_(dimension_names(topology)),
      axis_names_(mesh.axis_names()),
      fallback_text_("row-major") {
  const int n = mesh.device_count();
  std::optional<Parts> parts;
  switch (spec.kind) {
    case PlacementSpec::Kind::devices:
      check_device_list(spec, mesh, topology.device_count());
      devices_ = spec.devices;
      fallback_text_ = placement_text(spec);
      break;
    case PlacementSpec::Kind::axes:
      parts = explicit_parts(spec, mesh, topology);
      explicit_text_ = placement_text(spec);  // its parts' order says which is major
      break;
    case PlacementSpec::Kind::automatic:
      if (topology.kind() == "torus" || topology.kind() == "mesh") {
        parts = torus_default_parts(mesh, machine_dims_);
      }
      if (!parts) parts = row_major_parts(mesh, machine_dims_);
      break;
    case PlacementSpec::Kind::row_major: parts = row_major_parts(mesh, machine_dims_); break;
  }
  if (parts) {
    parts_ = std::move(*parts);
    devices_ = devices_of_parts(parts_, n, machine_dims_);
  } else if (devices_.empty()) {
    devices_.resize(static_cast<std::size_t>(n));
    std::iota(devices_.begin(), devices_.end(), 0);
  }
  mesh_devices_.assign(static_cast<std::size_t>(topology.device_count()), -1);
  for (int m = 0; m < n; ++m) mesh_devices_[static_cast<std::size_t>(device(m))] = m;
}

int MeshPlacement::mesh_device(int machine_device) const {
  return mesh_devices_[static_cast<std::size_t>(machine_device)];
}

PlacedGroup MeshPlacement::group(const std::vector<int>& mesh_devices) const {
  PlacedGroup placed;
  placed.devices.reserve(mesh_devices.size());
  for (int m : mesh_devices) placed.devices.push_back(device(m));
  placed.grid_dims = grid_of(mesh_devices);
  return placed;
}

// The parts along which the group's ranks vary, ordered by how fast they vary with the rank,
// when the ranks are exactly row-major over them from coordinate 0. Without parts, the
// topology's grid for a group of every device in device order.
std::vector<int> MeshPlacement::grid_of(const std::vector<int>& mesh_devices) const {
  const auto n = static_cast<int>(mesh_devices.size());
  if (parts_.empty()) {
    const int product =
        std::accumulate(machine_dims_.begin(), machine_dims_.end(), 1, std::multiplies<>());
    if (machine_dims_.empty() || product != n) return {};
    for (int r = 0; r < n; ++r) {
      if (device(mesh_devices[static_cast<std::size_t>(r)]) != r) return {};
    }
    return machine_dims_;
  }
  // rank_stride[p]: the first rank whose coordinate along part p differs from rank 0's.
  std::vector<std::pair<int, std::size_t>> varying;  // (rank stride, part), fastest last
  for (std::size_t p = 0; p < parts_.size(); ++p) {
    const int first = part_coordinate(mesh_devices.front(), parts_[p]);
    for (int r = 1; r < n; ++r) {
      if (part_coordinate(mesh_devices[static_cast<std::size_t>(r)], parts_[p]) != first) {
        varying.emplace_back(r, p);
        break;
      }
    }
  }
  std::sort(varying.begin(), varying.end(), std::greater<>());
  std::vector<int> grid;
  int expected_stride = n;
  for (auto [stride, p] : varying) {
    expected_stride /= parts_[p].size;
    if (stride != expected_stride) return {};
    grid.push_back(parts_[p].size);
  }
  if (expected_stride != 1) return {};
  for (int r = 0; r < n; ++r) {
    for (auto [stride, p] : varying) {
      const int c = part_coordinate(mesh_devices[static_cast<std::size_t>(r)], parts_[p]);
      if (c != r / stride % parts_[p].size) return {};
    }
  }
  return grid;
}

std::string MeshPlacement::text() const {
  if (parts_.empty()) return fallback_text_;
  if (!explicit_text_.empty()) return explicit_text_;
  std::vector<std::string> axes;
  for (std::size_t a = 0; a < axis_names_.size(); ++a) {
    std::vector<std::string> pieces;
    for (const Part& p : parts_) {
      if (p.axis != static_cast<int>(a)) continue;
      const std::string& dim = dim_names_[static_cast<std::size_t>(p.dim)];
      const bool whole = p.size == machine_dims_[static_cast<std::size_t>(p.dim)];
      pieces.push_back(whole ? dim : fmt::format("{}:{}", dim, p.size));
    }
    if (!pieces.empty())
      axes.push_back(fmt::format("{}={}", axis_names_[a], fmt::join(pieces, "+")));
  }
  return axes.empty() ? fallback_text_ : fmt::format("{}", fmt::join(axes, ","));
}

}  // namespace spmd::sim
