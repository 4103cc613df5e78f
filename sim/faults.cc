#include "sim/faults.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "reference/error.h"
#include "support/units.h"

namespace spmd::sim {
namespace {

constexpr std::string_view kFlagForm =
    "KIND:FIELD=VALUE,... with KIND straggler (device, factor, at), degraded (link, factor, at), "
    "failed_link (link, at) or failed_device (device, at), like straggler:device=3,factor=2,at=1ms";

FaultKind kind_from_name(std::string_view name, std::string_view field) {
  if (name == "straggler") return FaultKind::straggler;
  if (name == "degraded") return FaultKind::degraded;
  if (name == "failed_link") return FaultKind::failed_link;
  if (name == "failed_device") return FaultKind::failed_device;
  throw Error(fmt::format("{}: \"{}\", expected straggler, degraded, failed_link or failed_device",
                          field, name));
}

// The fields each kind takes, in the order errors list them.
std::vector<std::string_view> kind_fields(FaultKind kind) {
  switch (kind) {
    case FaultKind::straggler: return {"device", "factor", "at"};
    case FaultKind::degraded: return {"link", "factor", "at"};
    case FaultKind::failed_link: return {"link", "at"};
    case FaultKind::failed_device: return {"device", "at"};
  }
  return {};
}

[[noreturn]] void fail_field(std::string_view field, std::string_view value,
                             std::string_view expected) {
  throw Error(fmt::format("{}: \"{}\", expected {}", field, value, expected));
}

int parse_node(std::string_view text, std::string_view field, std::string_view expected) {
  int value = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) {
    fail_field(field, text, expected);
  }
  return value;
}

double parse_factor(std::string_view text, std::string_view field, FaultKind kind) {
  const std::string_view expected = kind == FaultKind::straggler
                                        ? "a factor >= 1 like 2 (compute takes that many times as long)"
                                        : "a factor in (0, 1] like 0.5 (of the link's bandwidth)";
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  const bool in_range = kind == FaultKind::straggler ? value >= 1 && std::isfinite(value)
                                                     : value > 0 && value <= 1;
  if (error != std::errc() || end != text.data() + text.size() || !in_range) {
    fail_field(field, text, expected);
  }
  return value;
}

// The fault from its kind and its fields as text; `prefix` names the fields in errors
// ("--fault" gives "--fault device", "machine.faults[0]" gives "machine.faults[0].device").
Fault fault_from_fields(FaultKind kind, const std::map<std::string, std::string>& fields,
                        std::string_view prefix, std::string_view separator) {
  Fault fault;
  fault.kind = kind;
  const std::vector<std::string_view> known = kind_fields(kind);
  const auto name = [&](std::string_view key) {
    return fmt::format("{}{}{}", prefix, separator, key);
  };
  for (const auto& [key, value] : fields) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      throw Error(fmt::format("{}: unknown field for {}, expected {}", name(key),
                              fault_kind_name(kind), fmt::join(known, ", ")));
    }
  }
  for (std::string_view key : known) {
    const auto it = fields.find(std::string(key));
    if (it == fields.end()) {
      throw Error(fmt::format("{}: missing, a {} fault needs {}", name(key), fault_kind_name(kind),
                              fmt::join(known, ", ")));
    }
    const std::string& text = it->second;
    if (key == "device") {
      fault.device = parse_node(text, name(key), "a device id >= 0 like 3");
    } else if (key == "link") {
      const std::size_t dash = text.find('-');
      const std::string_view expected = "a link FROM-TO between two node ids like 0-1";
      if (dash == std::string::npos) fail_field(name(key), text, expected);
      const std::string_view whole(text);
      fault.link_from = parse_node(whole.substr(0, dash), name(key), expected);
      fault.link_to = parse_node(whole.substr(dash + 1), name(key), expected);
    } else if (key == "factor") {
      fault.factor = parse_factor(text, name(key), kind);
    } else {
      fault.at_ps = parse_duration_ps(text, name(key));
    }
  }
  return fault;
}

}  // namespace

std::string_view fault_kind_name(FaultKind kind) {
  switch (kind) {
    case FaultKind::straggler: return "straggler";
    case FaultKind::degraded: return "degraded";
    case FaultKind::failed_link: return "failed_link";
    case FaultKind::failed_device: return "failed_device";
  }
  return "?";
}

std::string fault_description(const Fault& fault) {
  const std::string at = format_duration_ps(fault.at_ps);
  switch (fault.kind) {
    case FaultKind::straggler:
      return fmt::format("straggler: device {} computes {}x slower from {}", fault.device,
                         fault.factor, at);
    case FaultKind::degraded:
      return fmt::format("degraded: link {}-{} at {}x bandwidth from {}", fault.link_from,
                         fault.link_to, fault.factor, at);
    case FaultKind::failed_link:
      return fmt::format("failed_link: link {}-{} fails at {}", fault.link_from, fault.link_to, at);
    case FaultKind::failed_device:
      return fmt::format("failed_device: device {} fails at {}", fault.device, at);
  }
  return "?";
}

Fault fault_from_flag(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) fail_field("--fault", text, kFlagForm);
  const FaultKind kind = kind_from_name(text.substr(0, colon), "--fault kind");
  std::map<std::string, std::string> fields;
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const std::size_t equals = item.find('=');
    if (equals == std::string_view::npos || equals == 0) fail_field("--fault", text, kFlagForm);
    const std::string key(item.substr(0, equals));
    if (!fields.emplace(key, std::string(item.substr(equals + 1))).second) {
      throw Error(fmt::format("--fault {}: given twice in \"{}\", expected once", key, text));
    }
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return fault_from_fields(kind, fields, "--fault", " ");
}

Fault fault_from_json(const JsonValue& value) {
  value.require_object({"kind", "device", "link", "factor", "at"});
  const FaultKind kind = value.required("kind", "straggler, degraded, failed_link or failed_device")
                             .named("straggler, degraded, failed_link or failed_device",
                                    [&](const std::string& name) {
                                      return kind_from_name(name, value.path() + ".kind");
                                    });
  std::map<std::string, std::string> fields;
  for (const auto& [key, unused] : value.json().items()) {
    if (key == "kind") continue;
    const JsonValue field = *value.optional(key);
    // The flag's parser reads the fields from text, so the JSON types are checked here.
    if (key == "device" && !field.is_number()) field.fail_type("an integer device id");
    if (key == "factor" && !field.is_number()) field.fail_type("a number");
    fields[key] = field.is_string() ? field.string() : field.number_text();
  }
  return fault_from_fields(kind, fields, value.path(), ".");
}

nlohmann::json fault_to_json(const Fault& fault) {
  nlohmann::json json = {{"kind", std::string(fault_kind_name(fault.kind))}};
  if (fault.device >= 0) json["device"] = fault.device;
  if (fault.link_from >= 0) json["link"] = fmt::format("{}-{}", fault.link_from, fault.link_to);
  if (fault.kind == FaultKind::straggler || fault.kind == FaultKind::degraded) {
    json["factor"] = fault.factor;
  }
  json["at"] = exact_duration_text(fault.at_ps);
  return json;
}

std::vector<int> links_between(const topology::Topology& topology, int from, int to) {
  std::vector<int> links;
  const std::vector<topology::Link>& all = topology.links();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].from == from && all[i].to == to) links.push_back(static_cast<int>(i));
  }
  return links;
}

std::string link_name(const topology::Topology& topology, int link) {
  const topology::Link& l = topology.links().at(static_cast<std::size_t>(link));
  return fmt::format("link {}-{} ({})", l.from, l.to, l.label);
}

std::int64_t degraded_bandwidth(std::int64_t bytes_per_s, double factor) {
  const double scaled = std::floor(static_cast<double>(bytes_per_s) * factor);
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(scaled));
}

void check_faults(const std::vector<Fault>& faults, const topology::Topology& topology,
                  std::string_view field) {
  std::set<int> stragglers;
  for (std::size_t i = 0; i < faults.size(); ++i) {
    const Fault& fault = faults[i];
    const std::string at = fmt::format("{}[{}]", field, i);
    if (fault.device >= topology.device_count()) {
      throw Error(fmt::format("{}.device: {}, expected a device id below {}", at, fault.device,
                              topology.device_count()));
    }
    if (fault.kind == FaultKind::straggler && !stragglers.insert(fault.device).second) {
      throw Error(fmt::format("{}.device: {}, expected one straggler fault per device", at,
                              fault.device));
    }
    if (fault.link_from >= 0 && links_between(topology, fault.link_from, fault.link_to).empty()) {
      throw Error(fmt::format("{}.link: \"{}-{}\", expected a link of {} (FROM-TO node ids, e.g. "
                              "{}-{})",
                              at, fault.link_from, fault.link_to, topology.name(),
                              topology.links().front().from, topology.links().front().to));
    }
  }
}

FaultPlan::FaultPlan(const std::vector<Fault>& faults, const topology::Topology& topology,
                     std::int64_t origin_ps) {
  for (const Fault& fault : faults) {
    Timed timed{fault, fault.at_ps - origin_ps, {}};
    if (fault.link_from >= 0) timed.links = links_between(topology, fault.link_from, fault.link_to);
    if (fault.kind != FaultKind::straggler) changes_collectives_ = true;
    faults_.push_back(std::move(timed));
  }
}

std::int64_t FaultPlan::compute_end_ps(int device, std::int64_t start_ps,
                                       std::int64_t duration_ps) const {
  for (const Timed& timed : faults_) {
    if (timed.fault.kind != FaultKind::straggler || timed.fault.device != device) continue;
    const std::int64_t end_ps = start_ps + duration_ps;
    if (end_ps <= timed.at_ps) return end_ps;
    // The part after the fault's time takes factor times as long.
    const std::int64_t slow_from_ps = std::max(start_ps, timed.at_ps);
    const double slowed = std::ceil(static_cast<double>(end_ps - slow_from_ps) * timed.fault.factor);
    if (!(slowed < 9.2e18 - static_cast<double>(slow_from_ps))) {
      throw Error(fmt::format("straggler on device {}: a compute span of {} ps slowed {}x "
                              "overflows the clock, expected a smaller factor",
                              device, duration_ps, timed.fault.factor));
    }
    return slow_from_ps + static_cast<std::int64_t>(slowed);
  }
  return start_ps + duration_ps;
}

std::optional<std::int64_t> FaultPlan::device_failure_ps(int device) const {
  std::optional<std::int64_t> first;
  for (const Timed& timed : faults_) {
    if (timed.fault.kind == FaultKind::failed_device && timed.fault.device == device) {
      first = std::min(first.value_or(timed.at_ps), timed.at_ps);
    }
  }
  return first;
}

std::optional<int> FaultPlan::failed_link(const std::vector<int>& links,
                                          std::int64_t time_ps) const {
  for (const Timed& timed : faults_) {
    if (timed.fault.kind != FaultKind::failed_link || timed.at_ps > time_ps) continue;
    for (int link : links) {
      if (std::find(timed.links.begin(), timed.links.end(), link) != timed.links.end()) {
        return link;
      }
    }
  }
  return std::nullopt;
}

}  // namespace spmd::sim
