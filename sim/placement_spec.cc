#include "sim/placement_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>

#include "reference/error.h"

namespace spmd::sim {
namespace {

constexpr std::string_view kSyntax =
    "auto, row-major, devices:3,2,1,0, or mesh axes on machine dimensions like data=y,model=x "
    "or a=x:4,b=x+y (dimensions x, y, z; inter, intra; or 0, 1, 2)";

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// A non-negative decimal integer, or -1.
int whole_number(std::string_view text) {
  int value = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return -1;
  return value;
}

class Parser {
 public:
  Parser(std::string_view text, std::string_view flag) : text_(text), flag_(flag) {}

  [[noreturn]] void fail(std::string_view what) const {
    throw Error(fmt::format("{} {}: {}, expected {}", flag_, text_, what, kSyntax));
  }

  std::vector<int> devices(std::string_view list) const {
    std::vector<int> devices;
    for (std::string_view item : split(list, ',')) {
      const int device = whole_number(item);
      if (device < 0) fail(fmt::format("device '{}' is not a device number", item));
      devices.push_back(device);
    }
    return devices;
  }

  DimPart part(std::string_view text) const {
    const std::size_t colon = text.find(':');
    DimPart part{std::string(text.substr(0, colon)), 0};
    if (part.dim.empty()) fail("a mesh axis part names no machine dimension");
    if (colon != std::string_view::npos) {
      part.size = whole_number(text.substr(colon + 1));
      if (part.size < 1) fail(fmt::format("'{}' has no positive size after ':'", text));
    }
    return part;
  }

  AxisPlacement axis(std::string_view item) const {
    const std::size_t equals = item.find('=');
    if (equals == std::string_view::npos || equals == 0) {
      fail(fmt::format("'{}' is not AXIS=DIMENSIONS", item));
    }
    AxisPlacement axis{std::string(item.substr(0, equals)), {}};
    for (std::string_view p : split(item.substr(equals + 1), '+')) axis.parts.push_back(part(p));
    return axis;
  }

 private:
  std::string_view text_, flag_;
};

std::string part_text(const DimPart& part) {
  return part.size > 0 ? fmt::format("{}:{}", part.dim, part.size) : part.dim;
}

}  // namespace

PlacementSpec placement_from_text(std::string_view text, std::string_view flag) {
  const Parser parser(text, flag);
  if (text == "auto") return {};
  if (text == "row-major") return {.kind = PlacementSpec::Kind::row_major};
  if (text.starts_with("devices:")) {
    return {.kind = PlacementSpec::Kind::devices, .devices = parser.devices(text.substr(8))};
  }
  if (text.empty()) parser.fail("empty");
  PlacementSpec spec{.kind = PlacementSpec::Kind::axes};
  for (std::string_view item : split(text, ',')) {
    AxisPlacement axis = parser.axis(item);
    for (const AxisPlacement& earlier : spec.axes) {
      if (earlier.axis == axis.axis) parser.fail(fmt::format("axis {} is placed twice", axis.axis));
    }
    spec.axes.push_back(std::move(axis));
  }
  return spec;
}

std::string placement_text(const PlacementSpec& spec) {
  switch (spec.kind) {
    case PlacementSpec::Kind::automatic: return "auto";
    case PlacementSpec::Kind::row_major: return "row-major";
    case PlacementSpec::Kind::devices:
      return fmt::format("devices:{}", fmt::join(spec.devices, ","));
    case PlacementSpec::Kind::axes: break;
  }
  std::vector<std::string> axes;
  for (const AxisPlacement& axis : spec.axes) {
    std::vector<std::string> parts;
    for (const DimPart& part : axis.parts) parts.push_back(part_text(part));
    axes.push_back(fmt::format("{}={}", axis.axis, fmt::join(parts, "+")));
  }
  return fmt::format("{}", fmt::join(axes, ","));
}

std::string_view placement_syntax() { return kSyntax; }

}  // namespace spmd::sim
