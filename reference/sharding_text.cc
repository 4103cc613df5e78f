#include "reference/sharding_text.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <limits>
#include <optional>

#include "reference/error.h"

namespace spmd {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == separator) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

bool is_name(std::string_view text) {
  if (text.empty() || text == "None") return false;
  for (char c : text) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

// A decimal integer from `least` to `most`, or nothing.
std::optional<std::int64_t> integer(std::string_view text, std::int64_t least, std::int64_t most) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < least || value > most) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

std::vector<int> parse_mesh_shape(std::string_view text, const std::string& field) {
  std::vector<int> shape;
  for (std::string_view part : split(text, 'x')) {
    const auto size = integer(part, 1, std::numeric_limits<int>::max());
    if (!size) {
      throw Error(fmt::format("{}: '{}', expected positive axis sizes joined by 'x' (2x4)", field,
                              text));
    }
    shape.push_back(static_cast<int>(*size));
  }
  return shape;
}

std::vector<std::string> parse_axis_names(std::string_view text, const std::string& field) {
  std::vector<std::string> names;
  for (std::string_view part : split(text, ',')) {
    if (!is_name(part)) {
      throw Error(fmt::format(
          "{}: '{}', expected axis names (letters, digits, '_'; not None) joined by ',' "
          "(data,model)",
          field, text));
    }
    names.emplace_back(part);
  }
  return names;
}

Mesh parse_mesh(std::string_view shape_text, std::string_view names_text,
                const std::string& shape_field, const std::string& names_field) {
  const std::vector<int> shape = parse_mesh_shape(shape_text, shape_field);
  const std::vector<std::string> names = parse_axis_names(names_text, names_field);
  if (names.size() != shape.size()) {
    throw Error(fmt::format("{}: '{}' has {} name{}, expected one per axis of {} {}: {}", names_field,
                            names_text, names.size(), names.size() == 1 ? "" : "s", shape_field,
                            shape_text, shape.size()));
  }
  for (std::size_t k = 0; k < names.size(); ++k) {
    for (std::size_t j = 0; j < k; ++j) {
      if (names[j] == names[k]) {
        throw Error(fmt::format("{}: '{}' names axis '{}' twice, expected distinct names",
                                names_field, names_text, names[k]));
      }
    }
  }
  return Mesh(shape, names);  // its own check: at most 2^31-1 devices
}

PartitionSpec parse_partition_spec(std::string_view text, const std::string& field) {
  auto fail = [&] {
    return Error(fmt::format("{}: '{}', expected one entry per dimension joined by ',', each None, "
                             "an axis name or (axis,axis) (data,None or (data,model))",
                             field, text));
  };
  std::vector<SpecEntry> entries;
  std::size_t i = 0;
  while (true) {
    SpecEntry entry;
    if (i < text.size() && text[i] == '(') {
      const std::size_t close = text.find(')', i);
      if (close == std::string_view::npos) throw fail();
      for (std::string_view name : split(text.substr(i + 1, close - i - 1), ',')) {
        if (!is_name(name)) throw fail();
        entry.emplace_back(name);
      }
      i = close + 1;
    } else {
      const std::size_t comma = std::min(text.find(',', i), text.size());
      const std::string_view word = text.substr(i, comma - i);
      if (word != "None") {
        if (!is_name(word)) throw fail();
        entry.emplace_back(word);
      }
      i = comma;
    }
    entries.push_back(std::move(entry));
    if (i == text.size()) break;
    if (text[i] != ',') throw fail();
    ++i;
  }
  return PartitionSpec(std::move(entries));
}

std::vector<std::int64_t> parse_array_shape(std::string_view text, const std::string& field) {
  std::vector<std::int64_t> shape;
  for (std::string_view part : split(text, ',')) {
    // Sizes past 2^40 elements would overflow the block arithmetic of a shard's bytes.
    const auto size = integer(part, 1, std::int64_t{1} << 40);
    if (!size) {
      throw Error(fmt::format(
          "{}: '{}', expected dimension sizes from 1 to 2^40 joined by ',' (16,8)", field, text));
    }
    shape.push_back(*size);
  }
  return shape;
}

}  // namespace spmd
