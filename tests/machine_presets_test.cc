// Machine presets (docs/machine-presets.md): every preset loads by name through each of the
// library's entry points and round-trips through machine_to_json; each carries the figures of
// its spec sheet; machine_preset_with_devices makes slices and multi-node machines with a
// topology that agrees with the fabric, and refuses other counts with one line naming them.

#include "sim/machine_presets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "reference/error.h"
#include "tests/error_of.h"

namespace spmd {
namespace {

using nlohmann::json;
using test_errors::error_of;

constexpr std::int64_t kGB = 1'000'000'000;

json to_json(const sim::MachineSpec& machine) { return sim::machine_to_json(machine); }

TEST(MachinePresets, TheFourOriginalNamesAreKeptAndNewOnesAdded) {
  const std::vector<std::string> names = machine_preset_names();
  for (const char* name :
       {"dgx-h100", "dgx-h100-x4", "tpu-v4-64", "tpu-v5e-256", "hgx-a100", "hgx-h100",
        "hgx-h200", "hgx-b200", "gb200-nvl72", "gb300-nvl72", "gh200-quad", "mi300x", "mi325x",
        "mi355x", "mi350x", "hgx-b300", "tpu-v5p", "tpu-v6e", "dgx-1-v100", "dgx-2-v100",
        "pcie-v100", "pcie-a100", "pcie-h100", "pcie-h100-nvl", "mi250x"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

TEST(MachinePresets, EveryPresetLoadsByNameAndRoundTrips) {
  for (const std::string& name : machine_preset_names()) {
    SCOPED_TRACE(name);
    const sim::MachineSpec preset = machine_preset(name).value();
    EXPECT_EQ(preset.name.rfind(name + ": ", 0), 0u) << preset.name;
    EXPECT_EQ(topology::device_count_of(preset.topology), preset.devices);
    const json written = to_json(preset);
    EXPECT_EQ(to_json(sim::machine_from_json(written)), written);
    // The same machine by each way the library takes a name.
    EXPECT_EQ(to_json(machine_from_name_or_file(name)), written);
    EXPECT_EQ(to_json(sim::load_machine_file(name)), written);
    EXPECT_EQ(to_json(machine_preset_with_devices(name, preset.devices)), written);
    // GPU machines carry a fabric whose nodes the devices fit; TPU slices have none.
    const bool tpu = name.rfind("tpu-", 0) == 0;
    EXPECT_EQ(preset.fabric.has_value(), !tpu);
    if (preset.fabric) {
      EXPECT_TRUE(sim::devices_fit_nodes(preset.devices, preset.fabric->devices_per_node));
      EXPECT_GT(preset.fabric->nics_per_node, 0);
      EXPECT_GT(preset.fabric->nic_bytes_per_s, 0);
    }
  }
}

TEST(MachinePresets, TheOriginalFourKeepTheirFigures) {
  const sim::MachineSpec dgx = machine_preset("dgx-h100").value();
  EXPECT_EQ(dgx.name, "dgx-h100: 8x H100 SXM, NVLink 4 through NVSwitch");
  EXPECT_EQ(dgx.devices, 8);
  EXPECT_EQ(dgx.memory_bytes, 80 * kGB);
  EXPECT_EQ(dgx.peak_flops_per_s, 989e12);
  EXPECT_EQ(dgx.memory_bandwidth_bytes_per_s, 3'350 * kGB);
  const auto& box = std::get<topology::SwitchSpec>(dgx.topology);
  EXPECT_EQ(box.link.bandwidth_bytes_per_s, 450 * kGB);
  EXPECT_EQ(box.link.latency_ps, 500'000);
  EXPECT_EQ(dgx.algorithms.at("all_reduce"), collectives::Algorithm::ring);

  const sim::MachineSpec four = machine_preset("dgx-h100-x4").value();
  EXPECT_EQ(four.devices, 32);
  const auto& boxes = std::get<topology::HierarchicalSpec>(four.topology);
  EXPECT_EQ(boxes.devices_per_node, 8);
  EXPECT_EQ(boxes.intra_node_link.bandwidth_bytes_per_s, 450 * kGB);
  EXPECT_EQ(boxes.inter_node_link.bandwidth_bytes_per_s, 50 * kGB);  // 400 Gb/s NDR per GPU
  EXPECT_EQ(boxes.inter_node_link.latency_ps, 5'000'000);

  const sim::MachineSpec v4 = machine_preset("tpu-v4-64").value();
  const auto& cube = std::get<topology::TorusSpec>(v4.topology);
  EXPECT_EQ(cube.dims, (std::vector<int>{4, 4, 4}));
  EXPECT_EQ(cube.dim_links[0].bandwidth_bytes_per_s, 45 * kGB);
  EXPECT_EQ(v4.memory_bytes, std::int64_t{32} << 30);

  const sim::MachineSpec v5e = machine_preset("tpu-v5e-256").value();
  EXPECT_EQ(std::get<topology::TorusSpec>(v5e.topology).dims, (std::vector<int>{16, 16}));
  EXPECT_EQ(v5e.peak_flops_per_s, 197e12);
}

// Figures from the spec sheets cited in docs/machine-presets.md.
TEST(MachinePresets, GpuFabricsFollowTheirSpecSheets) {
  const cost_model::Fabric a100 = machine_preset("hgx-a100")->fabric.value();
  EXPECT_EQ(a100.generation, cost_model::GpuGeneration::ampere);
  EXPECT_EQ(a100.scale_up_bytes_per_s, 300 * kGB);  // NVLink 3: 600 GB/s both ways
  EXPECT_FALSE(a100.in_switch_reduction);
  EXPECT_EQ(a100.nic_bytes_per_s, 25 * kGB);  // HDR 200 Gb/s

  const cost_model::Fabric b200 = machine_preset("hgx-b200")->fabric.value();
  EXPECT_EQ(b200.generation, cost_model::GpuGeneration::blackwell);
  EXPECT_EQ(b200.scale_up_bytes_per_s, 900 * kGB);  // NVLink 5: 1.8 TB/s both ways
  EXPECT_TRUE(b200.in_switch_reduction);

  const sim::MachineSpec nvl72 = machine_preset("gb300-nvl72").value();
  EXPECT_EQ(nvl72.devices, 72);
  EXPECT_EQ(nvl72.memory_bytes, 288 * kGB);
  EXPECT_EQ(nvl72.fabric->host, cost_model::HostKind::grace);
  EXPECT_EQ(nvl72.fabric->devices_per_node, 72);
  EXPECT_EQ(nvl72.fabric->nics_per_node, 72);
  EXPECT_EQ(nvl72.fabric->nic_bytes_per_s, 100 * kGB);  // ConnectX-8, 800 Gb/s
  EXPECT_EQ(std::get<topology::SwitchSpec>(nvl72.topology).devices, 72);

  // A full mesh: one direct link to each peer, each the GPU's rate over its peers.
  const sim::MachineSpec mi300x = machine_preset("mi300x").value();
  EXPECT_EQ(mi300x.fabric->scale_up, cost_model::ScaleUpKind::full_mesh);
  EXPECT_EQ(mi300x.fabric->scale_up_bytes_per_s, 448 * kGB);
  EXPECT_EQ(std::get<topology::FullyConnectedSpec>(mi300x.topology).link.bandwidth_bytes_per_s,
            64 * kGB);  // 7 xGMI links of 64 GB/s each way
  EXPECT_EQ(machine_preset("mi355x")->fabric->generation, cost_model::GpuGeneration::cdna4);
  EXPECT_EQ(machine_preset("mi325x")->memory_bytes, 256 * kGB);
  // MI350X: MI355X's GPU at 2.2 GHz instead of 2.4, the same links.
  const sim::MachineSpec mi350x = machine_preset("mi350x").value();
  EXPECT_EQ(mi350x.fabric->generation, cost_model::GpuGeneration::cdna4);
  EXPECT_EQ(mi350x.fabric->scale_up_bytes_per_s,
            machine_preset("mi355x")->fabric->scale_up_bytes_per_s);
  EXPECT_DOUBLE_EQ(mi350x.peak_flops_per_s, 2306.9e12);  // 256 CUs x 2.2 GHz x 4096

  const sim::MachineSpec b300 = machine_preset("hgx-b300").value();
  EXPECT_EQ(b300.memory_bytes, 288 * kGB);
  EXPECT_EQ(b300.fabric->generation, cost_model::GpuGeneration::blackwell);
  EXPECT_EQ(b300.fabric->devices_per_node, 8);
  EXPECT_EQ(b300.fabric->nic_bytes_per_s, 100 * kGB);  // ConnectX-8, 800 Gb/s

  const sim::MachineSpec alps = machine_preset("gh200-quad").value();
  EXPECT_EQ(alps.devices, 4);
  EXPECT_EQ(alps.fabric->network, cost_model::NetworkKind::slingshot);
  EXPECT_EQ(std::get<topology::FullyConnectedSpec>(alps.topology).link.bandwidth_bytes_per_s,
            150 * kGB);  // 6 NVLinks of 25 GB/s to each of 3 peers
}

// The older and PCIe machines published training runs use (docs/machine-presets.md).
TEST(MachinePresets, VoltaPcieAndMi250xNodesHaveTheirOwnFabrics) {
  // DGX-1: six NVLink 2 links of 25 GB/s each way per GPU, four EDR NICs for eight GPUs.
  const sim::MachineSpec dgx1 = machine_preset("dgx-1-v100").value();
  EXPECT_EQ(dgx1.devices, 8);
  EXPECT_EQ(dgx1.memory_bytes, 32 * kGB);
  EXPECT_EQ(dgx1.fabric->generation, cost_model::GpuGeneration::volta);
  EXPECT_EQ(dgx1.fabric->scale_up, cost_model::ScaleUpKind::full_mesh);
  EXPECT_EQ(dgx1.fabric->scale_up_bytes_per_s, 150 * kGB);
  EXPECT_EQ(dgx1.fabric->nics_per_node, 4);
  EXPECT_EQ(dgx1.fabric->nic_bytes_per_s, 12'500'000'000);  // EDR 100 Gb/s
  // DGX-2: sixteen GPUs on NVSwitch at the same 150 GB/s, eight EDR NICs.
  const sim::MachineSpec dgx2 = machine_preset("dgx-2-v100").value();
  EXPECT_EQ(dgx2.devices, 16);
  EXPECT_EQ(dgx2.fabric->devices_per_node, 16);
  EXPECT_EQ(dgx2.fabric->scale_up, cost_model::ScaleUpKind::nvswitch);
  EXPECT_EQ(dgx2.fabric->scale_up_bytes_per_s, 150 * kGB);
  EXPECT_FALSE(dgx2.fabric->in_switch_reduction);
  EXPECT_EQ(dgx2.fabric->nics_per_node, 8);
  EXPECT_EQ(std::get<topology::SwitchSpec>(dgx2.topology).devices, 16);
  EXPECT_EQ(machine_preset_with_devices("dgx-2-v100", 32).fabric->devices_per_node, 16);
  // PCIe cards: no NVSwitch, the x16 link's rate each way (Gen3 16, Gen4 32, Gen5 64 GB/s).
  EXPECT_EQ(machine_preset("pcie-v100")->fabric->scale_up_bytes_per_s, 16 * kGB);
  EXPECT_EQ(machine_preset("pcie-a100")->fabric->scale_up_bytes_per_s, 32 * kGB);
  const sim::MachineSpec h100_pcie = machine_preset("pcie-h100").value();
  EXPECT_EQ(h100_pcie.fabric->generation, cost_model::GpuGeneration::hopper);
  EXPECT_EQ(h100_pcie.fabric->scale_up_bytes_per_s, 64 * kGB);
  EXPECT_FALSE(h100_pcie.fabric->in_switch_reduction);
  EXPECT_DOUBLE_EQ(h100_pcie.peak_flops_per_s, 756.5e12);
  EXPECT_EQ(machine_preset("pcie-h100-nvl")->memory_bytes, 94 * kGB);
  // Frontier: 4 MI250X are 8 GCDs, seven 50 GB/s Infinity Fabric links each, a Slingshot-11
  // NIC per package.
  const sim::MachineSpec frontier = machine_preset("mi250x").value();
  EXPECT_EQ(frontier.devices, 8);
  EXPECT_EQ(frontier.memory_bytes, 64 * kGB);
  EXPECT_EQ(frontier.fabric->generation, cost_model::GpuGeneration::cdna2);
  EXPECT_TRUE(cost_model::is_amd(frontier.fabric->generation));
  EXPECT_EQ(frontier.fabric->scale_up_bytes_per_s, 350 * kGB);
  EXPECT_EQ(frontier.fabric->nics_per_node, 4);
  EXPECT_EQ(frontier.fabric->nic_bytes_per_s, 25 * kGB);
  EXPECT_EQ(frontier.fabric->network, cost_model::NetworkKind::slingshot);
}

TEST(MachinePresetWithDevices, PartOfOneNodeIsASlice) {
  const sim::MachineSpec four = machine_preset_with_devices("hgx-h100", 4);
  EXPECT_EQ(four.devices, 4);
  EXPECT_EQ(four.name.rfind("hgx-h100 slice of 4 devices: 8x H100 SXM", 0), 0u) << four.name;
  EXPECT_EQ(std::get<topology::SwitchSpec>(four.topology).link.bandwidth_bytes_per_s, 450 * kGB);
  EXPECT_EQ(four.fabric->devices_per_node, 8);
  // A slice of a full mesh keeps its per-peer links.
  const sim::MachineSpec two = machine_preset_with_devices("mi300x", 2);
  EXPECT_EQ(std::get<topology::FullyConnectedSpec>(two.topology).link.bandwidth_bytes_per_s,
            64 * kGB);
}

TEST(MachinePresetWithDevices, MultiplesOfANodeAreNodesJoinedByTheirNics) {
  const sim::MachineSpec machine = machine_preset_with_devices("hgx-h100", 32);
  EXPECT_EQ(machine.name.rfind("hgx-h100 x4 nodes (32 devices): ", 0), 0u) << machine.name;
  const auto& nodes = std::get<topology::HierarchicalSpec>(machine.topology);
  EXPECT_EQ(nodes.devices, 32);
  EXPECT_EQ(nodes.devices_per_node, 8);
  EXPECT_EQ(nodes.intra_node_link.bandwidth_bytes_per_s, 450 * kGB);
  EXPECT_EQ(nodes.inter_node_link.bandwidth_bytes_per_s, 50 * kGB);  // one 400 Gb/s NIC per GPU
  EXPECT_EQ(nodes.inter_node_link.latency_ps, 5'000'000);
  // 4 NICs of 200 Gb/s shared by 4 GPUs; 72 of 800 Gb/s by 72.
  EXPECT_EQ(std::get<topology::HierarchicalSpec>(
                machine_preset_with_devices("gh200-quad", 16).topology)
                .inter_node_link.bandwidth_bytes_per_s,
            25 * kGB);
  const sim::MachineSpec racks = machine_preset_with_devices("gb300-nvl72", 144);
  EXPECT_EQ(std::get<topology::HierarchicalSpec>(racks.topology).devices_per_node, 72);
  EXPECT_EQ(std::get<topology::HierarchicalSpec>(racks.topology)
                .inter_node_link.bandwidth_bytes_per_s,
            100 * kGB);
  // A preset of several nodes also takes one node.
  EXPECT_EQ(std::get<topology::SwitchSpec>(machine_preset_with_devices("dgx-h100-x4", 8).topology)
                .devices,
            8);
}

TEST(MachinePresetWithDevices, TpuSlicesAreAsCubicOrSquareAsTheyCanBe) {
  struct Slice {
    const char* preset;
    int chips;
    std::vector<int> dims;
    bool torus;  // every axis longer than 2 wraps around
  };
  const std::vector<Slice> slices = {
      {"tpu-v5p", 4, {1, 2, 2}, true},     {"tpu-v5p", 32, {2, 4, 4}, true},
      {"tpu-v5p", 128, {4, 4, 8}, true},   {"tpu-v5p", 4096, {16, 16, 16}, true},
      {"tpu-v6e", 256, {16, 16}, true},    {"tpu-v6e", 128, {8, 16}, false},
      {"tpu-v6e", 64, {8, 8}, false},      {"tpu-v6e", 8, {2, 4}, false},
      {"tpu-v5e-256", 4, {2, 2}, true},    {"tpu-v4-64", 512, {8, 8, 8}, true},
  };
  for (const Slice& slice : slices) {
    SCOPED_TRACE(std::string(slice.preset) + " " + std::to_string(slice.chips));
    const sim::MachineSpec machine = machine_preset_with_devices(slice.preset, slice.chips);
    EXPECT_EQ(machine.devices, slice.chips);
    EXPECT_FALSE(machine.fabric.has_value());
    if (slice.torus) {
      EXPECT_EQ(std::get<topology::TorusSpec>(machine.topology).dims, slice.dims);
    } else {
      EXPECT_EQ(std::get<topology::MeshSpec>(machine.topology).dims, slice.dims);
    }
  }
  EXPECT_EQ(machine_preset_with_devices("tpu-v5p", 128).name,
            "tpu-v5p 4x4x8 slice (128 chips): TPU v5p, 3D torus");
  EXPECT_EQ(std::get<topology::TorusSpec>(machine_preset("tpu-v6e")->topology)
                .dim_links[0]
                .bandwidth_bytes_per_s,
            90 * kGB);  // 9e10 B/s one way per ICI link
}

TEST(MachinePresetWithDevices, OtherCountsAreOneLineErrors) {
  EXPECT_EQ(error_of([] { machine_preset_with_devices("hgx-h100", 12); }),
            "hgx-h100 takes 1 to 8 devices (part of one node) or a multiple of 8 (whole nodes), "
            "not 12");
  EXPECT_EQ(error_of([] { machine_preset_with_devices("gb200-nvl72", 0); }),
            "gb200-nvl72 takes 1 to 72 devices (part of one node) or a multiple of 72 (whole "
            "nodes), not 0");
  EXPECT_EQ(error_of([] { machine_preset_with_devices("tpu-v5p", 96); }),
            "tpu-v5p takes a power of two from 1 to 4096 chips (a slice of the pod), not 96");
  EXPECT_EQ(error_of([] { machine_preset_with_devices("tpu-v6e", 512); }),
            "tpu-v6e takes a power of two from 1 to 256 chips (a slice of the pod), not 512");
  EXPECT_EQ(error_of([] { machine_preset_with_devices("dgx-z1", 8); })
                .rfind("machine preset dgx-z1: no such preset, expected one of dgx-h100, ", 0),
            0u);
}

}  // namespace
}  // namespace spmd
