#include "reference/collective_call.h"

#include "reference/error.h"

namespace spmd {
namespace {

constexpr std::pair<CollectiveOp, std::string_view> kOpNames[] = {
    {CollectiveOp::psum, "psum"},
    {CollectiveOp::pmean, "pmean"},
    {CollectiveOp::pmax, "pmax"},
    {CollectiveOp::pmin, "pmin"},
    {CollectiveOp::all_gather, "all_gather"},
    {CollectiveOp::psum_scatter, "psum_scatter"},
    {CollectiveOp::all_to_all, "all_to_all"},
    {CollectiveOp::ppermute, "ppermute"},
    {CollectiveOp::pshuffle, "pshuffle"},
    {CollectiveOp::axis_index, "axis_index"},
};

std::string groups_to_string(const AxisIndexGroups& groups) {
  std::string s = "[";
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (g > 0) s += ", ";
    s += "[";
    for (std::size_t i = 0; i < groups[g].size(); ++i) {
      if (i > 0) s += ", ";
      s += std::to_string(groups[g][i]);
    }
    s += "]";
  }
  return s + "]";
}

}  // namespace

std::string_view collective_op_name(CollectiveOp op) {
  for (const auto& [value, name] : kOpNames) {
    if (value == op) return name;
  }
  __builtin_unreachable();
}

CollectiveOp collective_op_from_name(std::string_view name) {
  for (const auto& [value, op_name] : kOpNames) {
    if (op_name == name) return value;
  }
  std::string valid;
  for (const auto& [value, op_name] : kOpNames) valid += " " + std::string(op_name);
  throw Error("collective \"" + std::string(name) + "\" is not known, expected one of" + valid);
}

std::string AxisNames::to_string() const {
  if (names.size() == 1) return "'" + names[0] + "'";
  std::string s = "(";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += ", ";
    s += "'" + names[i] + "'";
  }
  return s + (names.size() == 1 ? ",)" : ")");
}

std::string CollectiveCall::to_string() const {
  std::string s = std::string(collective_op_name(op)) + "(" + axes.to_string();
  switch (op) {
    case CollectiveOp::all_gather:
      s += ", axis=" + std::to_string(axis) + ", tiled=" + (tiled ? "True" : "False");
      if (to_invariant) s += ", to='invarying'";
      break;
    case CollectiveOp::psum_scatter:
      s += ", scatter_dimension=" + std::to_string(axis) + ", tiled=" + (tiled ? "True" : "False");
      break;
    case CollectiveOp::all_to_all:
      s += ", split_axis=" + std::to_string(split_axis) +
           ", concat_axis=" + std::to_string(concat_axis) + ", tiled=" + (tiled ? "True" : "False");
      break;
    case CollectiveOp::ppermute: {
      s += ", perm=[";
      for (std::size_t i = 0; i < perm.size(); ++i) {
        if (i > 0) s += ", ";
        s += "(" + std::to_string(perm[i].first) + ", " + std::to_string(perm[i].second) + ")";
      }
      s += "]";
      break;
    }
    case CollectiveOp::pshuffle: {
      s += ", perm=[";
      for (std::size_t i = 0; i < shuffle.size(); ++i) {
        if (i > 0) s += ", ";
        s += std::to_string(shuffle[i]);
      }
      s += "]";
      break;
    }
    default:
      break;
  }
  if (axis_index_groups) s += ", axis_index_groups=" + groups_to_string(*axis_index_groups);
  return s + ")";
}

}  // namespace spmd
