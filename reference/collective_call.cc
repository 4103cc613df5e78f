#include "reference/collective_call.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ranges>

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
  throw Error(fmt::format("collective \"{}\" is not known, expected one of {}", name,
                          fmt::join(std::views::values(kOpNames), " ")));
}

std::string AxisNames::to_string() const {
  if (names.empty()) return "()";
  if (names.size() == 1) return fmt::format("'{}'", names[0]);
  return fmt::format("('{}')", fmt::join(names, "', '"));
}

std::string CollectiveCall::to_string() const {
  const std::string_view tiled_string = tiled ? "True" : "False";
  std::string s = fmt::format("{}({}", collective_op_name(op), axes.to_string());
  switch (op) {
    case CollectiveOp::all_gather:
      s += fmt::format(", axis={}, tiled={}", axis, tiled_string);
      if (to_invariant) s += ", to='invarying'";
      break;
    case CollectiveOp::psum_scatter:
      s += fmt::format(", scatter_dimension={}, tiled={}", axis, tiled_string);
      break;
    case CollectiveOp::all_to_all:
      s += fmt::format(", split_axis={}, concat_axis={}, tiled={}", split_axis, concat_axis,
                       tiled_string);
      break;
    case CollectiveOp::ppermute:  // fmt writes a pair as "(0, 1)"
      s += fmt::format(", perm=[{}]", fmt::join(perm, ", "));
      break;
    case CollectiveOp::pshuffle: s += fmt::format(", perm=[{}]", fmt::join(shuffle, ", ")); break;
    default: break;
  }
  // fmt writes the nested lists as Python does: "[[0, 1], [2, 3]]".
  if (axis_index_groups) s += fmt::format(", axis_index_groups={}", *axis_index_groups);
  return s + ")";
}

}  // namespace spmd
