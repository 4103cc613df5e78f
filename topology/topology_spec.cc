// Operations on any topology kind: each finds the kind's struct among TopologySpec's
// alternatives and calls its parts. The variant is the registry; nothing here names a kind.

#include "topology/topology_spec.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>


#include "reference/error.h"
#include "support/json_units.h"
#include "support/name_lists.h"
#include "support/units.h"

namespace spmd::topology {
namespace {

constexpr std::size_t kKindCount = std::variant_size_v<TopologySpec>;

template <std::size_t I>
using KindAt = std::variant_alternative_t<I, TopologySpec>;

// The first kind, from index I on, whose name is `kind`.
template <std::size_t I = 0>
std::optional<TopologySpec> from_json_of_kind(std::string_view kind, const JsonValue& object,
                                              int devices) {
  if constexpr (I == kKindCount) {
    return std::nullopt;
  } else {
    if (kind == KindAt<I>::kKind) return TopologySpec(KindAt<I>::from_json(object, devices));
    return from_json_of_kind<I + 1>(kind, object, devices);
  }
}

template <std::size_t I = 0>
std::optional<TopologySpec> from_text_of_kind(std::string_view name, std::string_view args,
                                              int devices, const CommandLineLinks& links) {
  if constexpr (I == kKindCount) {
    return std::nullopt;
  } else {
    if (auto spec = KindAt<I>::from_text(name, args, devices, links)) return TopologySpec(*spec);
    return from_text_of_kind<I + 1>(name, args, devices, links);
  }
}

template <std::size_t... I>
std::string kind_names(std::index_sequence<I...>) {
  return comma_list({KindAt<I>::kKind...});
}

template <std::size_t... I>
std::string text_syntaxes(std::index_sequence<I...>) {
  return or_list({KindAt<I>::kTextSyntax...});
}

}  // namespace

std::string_view kind_of(const TopologySpec& spec) {
  return std::visit([](const auto& kind) { return std::decay_t<decltype(kind)>::kKind; }, spec);
}

int device_count_of(const TopologySpec& spec) {
  return std::visit([](const auto& kind) { return kind.devices; }, spec);
}

TopologySpec topology_from_json(const JsonValue& object, int devices) {
  if (!object.json().is_object()) {
    object.fail_type(R"(an object like {"kind": "ring", "link": {...}})");
  }
  const std::string kinds = "one of " + kind_names(std::make_index_sequence<kKindCount>());
  const JsonValue kind = object.required("kind", kinds);
  std::optional<TopologySpec> spec = from_json_of_kind(kind.string(kinds), object, devices);
  if (!spec) kind.fail_value(kinds);
  return *spec;
}

nlohmann::json topology_to_json(const TopologySpec& spec) {
  return std::visit([](const auto& kind) { return kind.to_json(); }, spec);
}

TopologySpec topology_from_text(std::string_view text, int devices, const CommandLineLinks& links) {
  const std::size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const std::string_view args = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  std::optional<TopologySpec> spec = from_text_of_kind(name, args, devices, links);
  if (!spec) {
    throw Error(fmt::format("--topology: '{}', expected {}", text, topology_text_syntax()));
  }
  const std::string_view syntax =
      std::visit([](const auto& kind) { return std::decay_t<decltype(kind)>::kTextSyntax; }, *spec);
  if (colon != std::string_view::npos && args.empty()) {
    throw Error(fmt::format("--topology: '{}', expected {} (nothing after ':' is no size)", text,
                            syntax));
  }
  if (colon != std::string_view::npos && syntax.find(':') == std::string_view::npos) {
    throw Error(fmt::format("--topology: '{}', expected {} without ':' (the device count comes "
                            "from --devices)",
                            text, name));
  }
  return *spec;
}

TopologySpec rescaled_topology(const TopologySpec& spec, int devices) {
  return std::visit([devices](const auto& kind) { return TopologySpec(kind.rescaled(devices)); },
                    spec);
}

std::string topology_text_syntax() { return text_syntaxes(std::make_index_sequence<kKindCount>()); }

std::unique_ptr<Topology> make_topology(const TopologySpec& spec) {
  return std::visit([](const auto& kind) { return kind.make(); }, spec);
}

LinkSpec link_from_json(const JsonValue& value) {
  value.require_object({"bandwidth", "latency"});
  const JsonValue bandwidth = value.required("bandwidth", R"(a bandwidth like "100GB/s")");
  const JsonValue latency = value.required("latency", R"(a duration like "1us")");
  return {.bandwidth_bytes_per_s = bandwidth_from_json(bandwidth),
          .latency_ps = duration_ps_from_json(latency)};
}

LinkSpec required_link(const JsonValue& object, std::string_view key) {
  return link_from_json(object.required(key, R"({"bandwidth": "100GB/s", "latency": "1us"})"));
}

nlohmann::json link_to_json(const LinkSpec& link) {
  return {{"bandwidth", exact_bandwidth_text(link.bandwidth_bytes_per_s)},
          {"latency", exact_duration_text(link.latency_ps)}};
}

}  // namespace spmd::topology
