#include "reference/collective_groups.h"

#include <fmt/format.h>

#include <algorithm>

#include "reference/error.h"

namespace spmd {

std::vector<int> resolve_axes(const Mesh& mesh, const AxisNames& axes, std::string_view api) {
  std::vector<int> positions;
  for (const std::string& name : axes.names) {
    const int k = mesh.find_axis(name);
    if (k < 0) {
      throw Error(fmt::format(
          "NameError: Found an unbound axis name: {}. To fix this, please call {} under "
          "`jax.shard_map` (unbound axis name; mesh axes are {})",
          name, api, mesh.names_string()));
    }
    if (std::find(positions.begin(), positions.end(), k) != positions.end()) {
      throw Error(
          fmt::format("{}: axis name '{}' is given twice in {}, expected distinct axis names", api,
                      name, axes.to_string()));
    }
    positions.push_back(k);
  }
  return positions;
}

std::vector<std::vector<int>> axis_groups(const Mesh& mesh, const std::vector<int>& mesh_axes) {
  std::vector<int> other_axes;
  for (int k = 0; k < mesh.axis_count(); ++k) {
    if (std::find(mesh_axes.begin(), mesh_axes.end(), k) == mesh_axes.end()) {
      other_axes.push_back(k);
    }
  }
  auto size_of = [&](int k) { return mesh.shape()[static_cast<std::size_t>(k)]; };
  int group_size = 1;
  for (int k : mesh_axes) group_size *= size_of(k);
  const int group_count = mesh.device_count() / group_size;

  std::vector<std::vector<int>> groups;
  std::vector<int> coords(static_cast<std::size_t>(mesh.axis_count()), 0);
  for (int g = 0; g < group_count; ++g) {
    int rest = g;  // row-major over the other axes, in mesh order
    for (std::size_t i = other_axes.size(); i-- > 0;) {
      coords[static_cast<std::size_t>(other_axes[i])] = rest % size_of(other_axes[i]);
      rest /= size_of(other_axes[i]);
    }
    std::vector<int> members;
    for (int r = 0; r < group_size; ++r) {
      int combined = r;  // row-major over the named axes, first named most significant
      for (std::size_t i = mesh_axes.size(); i-- > 0;) {
        coords[static_cast<std::size_t>(mesh_axes[i])] = combined % size_of(mesh_axes[i]);
        combined /= size_of(mesh_axes[i]);
      }
      members.push_back(mesh.device_at(coords));
    }
    groups.push_back(std::move(members));
  }
  return groups;
}

void validate_axis_index_groups(const AxisIndexGroups& groups, int total) {
  std::vector<int> seen(static_cast<std::size_t>(std::max(total, 0)), 0);
  std::size_t listed = 0;
  for (const auto& group : groups) {
    for (int index : group) {
      ++listed;
      if (index < 0 || index >= total || seen[static_cast<std::size_t>(index)]++ > 0) {
        throw Error(fmt::format(
            "axis_index_groups must cover all indices exactly once: index {} is out of range or "
            "repeated, expected each of 0..{} once",
            index, total - 1));
      }
    }
  }
  if (listed != static_cast<std::size_t>(total)) {
    throw Error(fmt::format(
        "axis_index_groups must cover all indices exactly once: they list {} indices, expected {} "
        "(the size of the named axes)",
        listed, total));
  }
}

std::vector<std::vector<int>> collective_groups(const Mesh& mesh, const CollectiveCall& call) {
  std::vector<int> positions = resolve_axes(mesh, call.axes, collective_op_name(call.op));
  if (call.op == CollectiveOp::ppermute || call.op == CollectiveOp::pshuffle) {
    std::sort(positions.begin(), positions.end());
  }
  std::vector<std::vector<int>> groups = axis_groups(mesh, positions);
  if (!call.axis_index_groups) return groups;
  std::vector<std::vector<int>> split;
  for (const auto& group : groups) {
    for (const auto& index_group : *call.axis_index_groups) {
      std::vector<int> members;
      for (int index : index_group) members.push_back(group[static_cast<std::size_t>(index)]);
      split.push_back(std::move(members));
    }
  }
  return split;
}

int collective_axis_size(const Mesh& mesh, const CollectiveCall& call) {
  if (call.axis_index_groups && !call.axis_index_groups->empty()) {
    return static_cast<int>(call.axis_index_groups->front().size());
  }
  int size = 1;
  for (const std::string& name : call.axes.names) size *= mesh.axis_size(name);
  return size;
}

}  // namespace spmd
