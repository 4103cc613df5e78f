#include "support/name_lists.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace spmd {

std::string comma_list(const std::vector<std::string_view>& names) {
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string or_list(const std::vector<std::string_view>& names) {
  if (names.size() < 2) return comma_list(names);
  return fmt::format("{} or {}", fmt::join(names.begin(), names.end() - 1, ", "), names.back());
}

}  // namespace spmd
