#pragma once
// Enums named by tables of (value, name): one table gives both directions and the error's list
// of names ("\"pascal\" is no GPU generation, expected volta, ampere, ... or cdna4"). Names
// match exactly, or in any case where the names come from people (NCCL_PROTO takes "simple").

#include <fmt/format.h>

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reference/error.h"
#include "support/name_lists.h"

namespace spmd {

template <class Enum, std::size_t N>
using NameTable = std::array<std::pair<Enum, std::string_view>, N>;

enum class NameCase { exact, any };

// The text with A-Z as a-z.
std::string ascii_lowercase(std::string_view text);

template <class Enum, std::size_t N>
std::string_view name_in(const NameTable<Enum, N>& table, Enum value) {
  for (const auto& [entry, name] : table) {
    if (entry == value) return name;
  }
  return "?";  // unreachable for a valid enum value
}

// `what` names the kind of name in the error.
template <class Enum, std::size_t N>
Enum value_in(const NameTable<Enum, N>& table, std::string_view name, std::string_view what,
              NameCase match = NameCase::exact) {
  const std::string wanted = match == NameCase::any ? ascii_lowercase(name) : std::string(name);
  std::vector<std::string_view> names;
  for (const auto& [entry, entry_name] : table) {
    if ((match == NameCase::any ? ascii_lowercase(entry_name) : std::string(entry_name)) ==
        wanted) {
      return entry;
    }
    names.push_back(entry_name);
  }
  throw Error(fmt::format("\"{}\" is no {}, expected {}", name, what, or_list(names)));
}

}  // namespace spmd
