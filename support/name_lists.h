#pragma once
// Lists of names in messages and help texts: "a, b, c" and "a, b or c".

#include <string>
#include <string_view>
#include <vector>

namespace spmd {

std::string comma_list(const std::vector<std::string_view>& names);  // "a, b, c"
std::string or_list(const std::vector<std::string_view>& names);     // "a, b or c"

}  // namespace spmd
