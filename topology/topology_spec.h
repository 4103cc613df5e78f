#pragma once
// A topology as data: one spec per kind, read from a machine file's "topology" object
// (docs/machine-format.md) or from `--topology KIND[:ARGS]`, written back to JSON, and made into
// a Topology. The variant below is the registry of kinds: every operation on a TopologySpec
// finds the kind's own code through it. Each kind's struct declares its parts here and defines
// them in the kind's file (ring.cc, torus.cc, fully_connected.cc, switched.cc), beside the
// Topology that kind builds.
//
// Adding a kind: its struct here (the members every kind has, listed in RingSpec), an
// alternative in TopologySpec, and its file; see docs/design.md.

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "support/json_reader.h"
#include "topology/topology.h"

namespace spmd::topology {

// The links a command line sets (--link, --inter-link): every link of the topology, and the
// links between nodes of a machine that has nodes.
struct CommandLineLinks {
  LinkSpec link;
  LinkSpec inter_node_link;
};

struct RingSpec {
  // The name in machine files and reports.
  static constexpr std::string_view kKind = "ring";
  // What `--topology` accepts for this kind, for help and errors.
  static constexpr std::string_view kTextSyntax = "ring, ring-uni";

  int devices = 0;
  bool bidirectional = true;
  LinkSpec link;

  // Reads the kind's fields of a "topology" object for a machine of `devices` devices.
  static RingSpec from_json(const JsonValue& object, int devices);
  // `--topology NAME[:ARGS]`: nullopt when NAME is not this kind's.
  static std::optional<RingSpec> from_text(std::string_view name, std::string_view args,
                                           int devices, const CommandLineLinks& links);
  nlohmann::json to_json() const;  // with "kind"
  // The same kind, links and node size at another device count (`spmdsim scale`).
  RingSpec rescaled(int devices) const;
  std::unique_ptr<Topology> make() const;
  friend bool operator==(const RingSpec&, const RingSpec&) = default;
};

// Tori and meshes: sizes per dimension (2 or 3, product == devices), a link per dimension.
struct GridSpec {
  int devices = 0;
  std::vector<int> dims;
  std::vector<LinkSpec> dim_links;
  friend bool operator==(const GridSpec&, const GridSpec&) = default;

 protected:
  static GridSpec grid_from_json(const JsonValue& object, int devices);
  // `args` after "KIND:" (empty: near-square dims for `devices`).
  static GridSpec grid_from_text(std::string_view kind, std::string_view args, int devices,
                                 const CommandLineLinks& links);
  nlohmann::json grid_to_json(std::string_view kind) const;
  // Near-square dims for `devices`, every dimension with the first one's link.
  GridSpec grid_rescaled(int devices) const;
};

struct TorusSpec : GridSpec {
  static constexpr std::string_view kKind = "torus";
  static constexpr std::string_view kTextSyntax = "torus[:AxB[xC]]";
  static TorusSpec from_json(const JsonValue& object, int devices);
  static std::optional<TorusSpec> from_text(std::string_view name, std::string_view args,
                                            int devices, const CommandLineLinks& links);
  nlohmann::json to_json() const;
  TorusSpec rescaled(int devices) const { return {grid_rescaled(devices)}; }
  std::unique_ptr<Topology> make() const;
  friend bool operator==(const TorusSpec&, const TorusSpec&) = default;
};

struct MeshSpec : GridSpec {
  static constexpr std::string_view kKind = "mesh";
  static constexpr std::string_view kTextSyntax = "mesh[:AxB[xC]]";
  static MeshSpec from_json(const JsonValue& object, int devices);
  static std::optional<MeshSpec> from_text(std::string_view name, std::string_view args,
                                           int devices, const CommandLineLinks& links);
  nlohmann::json to_json() const;
  MeshSpec rescaled(int devices) const { return {grid_rescaled(devices)}; }
  std::unique_ptr<Topology> make() const;
  friend bool operator==(const MeshSpec&, const MeshSpec&) = default;
};

struct FullyConnectedSpec {
  static constexpr std::string_view kKind = "fully_connected";
  static constexpr std::string_view kTextSyntax = "fully_connected";
  int devices = 0;
  LinkSpec link;
  static FullyConnectedSpec from_json(const JsonValue& object, int devices);
  static std::optional<FullyConnectedSpec> from_text(std::string_view name, std::string_view args,
                                                     int devices, const CommandLineLinks& links);
  nlohmann::json to_json() const;
  FullyConnectedSpec rescaled(int new_devices) const { return {new_devices, link}; }
  std::unique_ptr<Topology> make() const;
  friend bool operator==(const FullyConnectedSpec&, const FullyConnectedSpec&) = default;
};

// A star: every device linked both ways to one switch.
struct SwitchSpec {
  static constexpr std::string_view kKind = "switch";
  static constexpr std::string_view kTextSyntax = "switch";
  int devices = 0;
  LinkSpec link;
  static SwitchSpec from_json(const JsonValue& object, int devices);
  static std::optional<SwitchSpec> from_text(std::string_view name, std::string_view args,
                                             int devices, const CommandLineLinks& links);
  nlohmann::json to_json() const;
  SwitchSpec rescaled(int new_devices) const { return {new_devices, link}; }
  std::unique_ptr<Topology> make() const;
  friend bool operator==(const SwitchSpec&, const SwitchSpec&) = default;
};

// Nodes of devices_per_node devices on a switch each, every device also on a network switch.
struct HierarchicalSpec {
  static constexpr std::string_view kKind = "hierarchical";
  static constexpr std::string_view kTextSyntax = "hierarchical:K";
  int devices = 0;
  int devices_per_node = 0;
  LinkSpec intra_node_link;
  LinkSpec inter_node_link;
  static HierarchicalSpec from_json(const JsonValue& object, int devices);
  static std::optional<HierarchicalSpec> from_text(std::string_view name, std::string_view args,
                                                   int devices, const CommandLineLinks& links);
  nlohmann::json to_json() const;
  HierarchicalSpec rescaled(int devices) const;  // an error unless nodes stay whole
  std::unique_ptr<Topology> make() const;
  friend bool operator==(const HierarchicalSpec&, const HierarchicalSpec&) = default;
};

using TopologySpec =
    std::variant<RingSpec, TorusSpec, MeshSpec, FullyConnectedSpec, SwitchSpec, HierarchicalSpec>;

// ---- Operations on any kind, dispatched through the variant (topology_spec.cc).

std::string_view kind_of(const TopologySpec& spec);  // "ring", "torus", ...
int device_count_of(const TopologySpec& spec);
// The "topology" object of a machine file (`object` is at path "topology"); the kind's reader
// checks that it agrees with the machine's `devices`.
TopologySpec topology_from_json(const JsonValue& object, int devices);
nlohmann::json topology_to_json(const TopologySpec& spec);
// "ring", "ring-uni", "torus", "torus:4x2", "mesh:2x2x2", "fully_connected", "switch",
// "hierarchical:4" for `devices` devices; a bare "torus" / "mesh" factors the devices into two
// dimensions as near square as possible. spmd::Error naming --topology for anything else.
TopologySpec topology_from_text(std::string_view text, int devices,
                                const CommandLineLinks& links = {});
// The same kind at another device count: see each kind's rescaled().
TopologySpec rescaled_topology(const TopologySpec& spec, int devices);
// Every kind's --topology syntax, for help texts: "ring, ring-uni, torus[:AxB[xC]], ...".
std::string topology_text_syntax();
std::unique_ptr<Topology> make_topology(const TopologySpec& spec);

// Shared by the kinds' readers and writers: {"bandwidth": "100GB/s", "latency": "1us"}.
LinkSpec link_from_json(const JsonValue& value);
// The link field `key` of `object`, required.
LinkSpec required_link(const JsonValue& object, std::string_view key);
nlohmann::json link_to_json(const LinkSpec& link);

}  // namespace spmd::topology
