#pragma once
// Which devices a collective over some mesh axes joins, and in which order (JAX pxla.py
// _axis_groups): one group per assignment of the other mesh axes; inside a group devices are
// ordered by the combined index over the named axes, first-named axis major. axis_index_groups
// split each such group into the listed sub-groups, in listed order.

#include <string_view>
#include <vector>

#include "reference/collective_call.h"
#include "reference/mesh.h"

namespace spmd {

// Mesh axis positions of the named axes, in the order named. An unknown name raises JAX's
// "Found an unbound axis name" error; `api` is the name JAX puts in it (psum, all_gather, ...).
std::vector<int> resolve_axes(const Mesh& mesh, const AxisNames& axes, std::string_view api);

// The groups of device ids, each in rank order, for a collective over `mesh_axes` (positions).
std::vector<std::vector<int>> axis_groups(const Mesh& mesh, const std::vector<int>& mesh_axes);

// The groups `call` forms, after axis_index_groups; ppermute orders multiple axes by mesh order
// (JAX 0.10.2 uses sorted device ids), the others by the order the names are given.
std::vector<std::vector<int>> collective_groups(const Mesh& mesh, const CollectiveCall& call);

// The axis size JAX uses for `call` (_axis_size): len(axis_index_groups[0]) when groups are
// given, else the product of the named axes' sizes.
int collective_axis_size(const Mesh& mesh, const CollectiveCall& call);

// Checks axis_index_groups: every index in [0, total) exactly once, where total is the product
// of the named axes' sizes.
void validate_axis_index_groups(const AxisIndexGroups& groups, int total);

}  // namespace spmd
