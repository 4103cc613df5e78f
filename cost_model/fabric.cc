#include "cost_model/fabric.h"

#include <fmt/format.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "support/name_table.h"

namespace spmd::cost_model {
namespace {

constexpr NameTable<GpuGeneration, 7> kGenerations = {{{GpuGeneration::volta, "volta"},
                                                       {GpuGeneration::ampere, "ampere"},
                                                       {GpuGeneration::hopper, "hopper"},
                                                       {GpuGeneration::blackwell, "blackwell"},
                                                       {GpuGeneration::cdna2, "cdna2"},
                                                       {GpuGeneration::cdna3, "cdna3"},
                                                       {GpuGeneration::cdna4, "cdna4"}}};
constexpr NameTable<HostKind, 2> kHosts = {{{HostKind::x86, "x86"}, {HostKind::grace, "grace"}}};
constexpr NameTable<ScaleUpKind, 2> kScaleUps = {
    {{ScaleUpKind::nvswitch, "nvswitch"}, {ScaleUpKind::full_mesh, "full_mesh"}}};
constexpr NameTable<NetworkKind, 5> kNetworks = {{{NetworkKind::infiniband, "infiniband"},
                                                  {NetworkKind::roce, "roce"},
                                                  {NetworkKind::slingshot, "slingshot"},
                                                  {NetworkKind::efa, "efa"},
                                                  {NetworkKind::ethernet, "ethernet"}}};

}  // namespace

int nodes_of(const Fabric& fabric, int devices) {
  return (devices + fabric.devices_per_node - 1) / fabric.devices_per_node;
}

bool is_amd(GpuGeneration generation) {
  return generation == GpuGeneration::cdna2 || generation == GpuGeneration::cdna3 ||
         generation == GpuGeneration::cdna4;
}

std::string_view generation_name(GpuGeneration generation) {
  return name_in(kGenerations, generation);
}
std::string_view host_kind_name(HostKind host) { return name_in(kHosts, host); }
std::string_view scale_up_kind_name(ScaleUpKind kind) { return name_in(kScaleUps, kind); }
std::string_view network_kind_name(NetworkKind kind) { return name_in(kNetworks, kind); }

GpuGeneration generation_from_name(std::string_view name) {
  return value_in(kGenerations, name, "GPU generation");
}
HostKind host_kind_from_name(std::string_view name) {
  return value_in(kHosts, name, "host kind");
}
ScaleUpKind scale_up_kind_from_name(std::string_view name) {
  return value_in(kScaleUps, name, "scale-up fabric");
}
NetworkKind network_kind_from_name(std::string_view name) {
  return value_in(kNetworks, name, "network");
}

}  // namespace spmd::cost_model
