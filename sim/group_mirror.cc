#include "sim/group_mirror.h"

#include <fmt/format.h>

#include <utility>

#include "reference/check.h"
#include "reference/collective_groups.h"

namespace spmd::sim {
namespace {

// What collective_groups reads of a call: its axes, its axis_index_groups and whether it orders
// several axes by mesh order (ppermute, pshuffle) or as named.
std::string groups_key(const CollectiveCall& call) {
  CollectiveCall key;
  const bool mesh_order = call.op == CollectiveOp::ppermute || call.op == CollectiveOp::pshuffle;
  key.op = mesh_order ? CollectiveOp::ppermute : CollectiveOp::psum;
  key.axes = call.axes;
  key.axis_index_groups = call.axis_index_groups;
  return key.to_string();
}

}  // namespace

GroupMirror::GroupMirror(Mesh full_mesh, MeshPlacement full_placement,
                         std::vector<int> representative)
    : full_mesh_(std::move(full_mesh)),
      full_placement_(std::move(full_placement)),
      representative_(std::move(representative)) {}

const GroupMirror::Groups& GroupMirror::groups_for(const CollectiveCall& call) const {
  const std::string key = groups_key(call);
  auto it = groups_.find(key);
  if (it != groups_.end()) return it->second;
  Groups made;
  made.groups = collective_groups(full_mesh_, call);
  made.axis_size = collective_axis_size(full_mesh_, call);
  made.group_of.assign(static_cast<std::size_t>(full_mesh_.device_count()), -1);
  for (std::size_t g = 0; g < made.groups.size(); ++g) {
    for (int member : made.groups[g]) {
      made.group_of[static_cast<std::size_t>(member)] = static_cast<int>(g);
    }
  }
  return groups_.emplace(key, std::move(made)).first->second;
}

MirroredGroup GroupMirror::full_group(const CollectiveCall& call,
                                      const std::vector<int>& reduced_members) const {
  SPMD_CHECK(!reduced_members.empty(), "a mirrored collective group without members");
  const Groups& groups = groups_for(call);
  const int first = representative(reduced_members.front());
  const int group = groups.group_of[static_cast<std::size_t>(first)];
  SPMD_CHECK(group >= 0, fmt::format("representative {} is in no group of {}", first,
                                     call.to_string()));
  for (int member : reduced_members) {
    SPMD_CHECK(groups.group_of[static_cast<std::size_t>(representative(member))] == group,
               fmt::format("the representatives of a group of {} lie in different full groups",
                           call.to_string()));
  }
  MirroredGroup mirrored;
  mirrored.placed = full_placement_.group(groups.groups[static_cast<std::size_t>(group)]);
  mirrored.axis_size = groups.axis_size;
  mirrored.groups = static_cast<int>(groups.groups.size());
  return mirrored;
}

}  // namespace spmd::sim
