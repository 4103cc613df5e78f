#pragma once
// A collective as a program calls it: the operation, the axis names it runs over, and its
// parameters, with JAX's names and meanings (jax.lax.psum, all_gather, ...).

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spmd {

enum class CollectiveOp {
  psum, pmean, pmax, pmin, all_gather, psum_scatter, all_to_all, ppermute, pshuffle, axis_index
};

std::string_view collective_op_name(CollectiveOp op);
CollectiveOp collective_op_from_name(std::string_view name);  // throws spmd::Error

// One axis name or several ("i", {"x", "y"}); with several, groups are ordered by the combined
// index with the first-named axis major.
struct AxisNames {
  std::vector<std::string> names;
  AxisNames() = default;
  AxisNames(const char* name) : names{name} {}
  AxisNames(std::string name) : names{std::move(name)} {}
  AxisNames(std::initializer_list<std::string> list) : names(list) {}
  AxisNames(std::vector<std::string> list) : names(std::move(list)) {}
  std::string to_string() const;  // "'i'" or "('x', 'y')"
  friend bool operator==(const AxisNames&, const AxisNames&) = default;
};

// Lists of axis indices in the combined index space; the order inside a group is the listed
// order (rank k of a group is its k-th listed index).
using AxisIndexGroups = std::vector<std::vector<int>>;

struct CollectiveCall {
  CollectiveOp op = CollectiveOp::psum;
  AxisNames axes;
  std::optional<AxisIndexGroups> axis_index_groups;
  int axis = 0;  // all_gather: axis; psum_scatter: scatter_dimension
  bool tiled = false;
  bool to_invariant = false;  // all_gather(to='invarying'): the result is typed invariant
  int split_axis = 0;   // all_to_all
  int concat_axis = 0;  // all_to_all
  std::vector<std::pair<int, int>> perm;  // ppermute: (source, destination) pairs
  std::vector<int> shuffle;               // pshuffle: shuffle[i] is the source of destination i

  // "psum('i')", "all_gather(('x', 'y'), axis=0, tiled=True)", for messages and traces.
  std::string to_string() const;
  friend bool operator==(const CollectiveCall&, const CollectiveCall&) = default;
};

}  // namespace spmd
