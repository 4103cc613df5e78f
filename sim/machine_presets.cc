#include "sim/machine_presets.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>
#include <variant>

#include "reference/error.h"
#include "reference/input_file.h"
#include "support/units.h"

namespace spmd {
namespace {

using nlohmann::json;

// Latencies we assume (docs/machine-presets.md): a GPU's port into its NVLink switch (1 us GPU
// to GPU through the switch), a direct GPU-to-GPU link (the same 1 us), a NIC's link into the
// network, and one TPU ICI hop.
constexpr std::string_view kSwitchPortLatency = "0.5us";
constexpr std::string_view kDirectLinkLatency = "1us";
constexpr std::string_view kNetworkLatency = "5us";
constexpr std::string_view kIciHopLatency = "1us";

// Nodes of GPUs on a scale-up fabric (NVSwitch or a full mesh) with NICs between nodes. The
// per-GPU figures and the fabric are the vendor's spec sheet's (docs/machine-presets.md).
struct GpuPreset {
  std::string name;
  int default_devices = 8;
  std::string title;  // the machine's name at default_devices
  std::string node;   // one node, for the machine's name at other device counts
  std::string memory, peak_flops, memory_bandwidth;
  // The machine file's "fabric" section, field by field (docs/machine-format.md).
  std::string generation, host;
  int devices_per_node = 8;
  std::string scale_up;            // nvswitch or full_mesh
  std::string scale_up_bandwidth;  // per GPU, per direction, all links
  bool in_switch_reduction = false;
  int nics_per_node = 8;
  std::string nic_bandwidth;  // per NIC, per direction
  std::string network;
  json algorithms = json::object();
};

// A slice of a TPU pod: chips on a 2D or 3D torus of ICI links, no fabric.
struct TpuPreset {
  std::string name;
  int default_chips = 0;
  std::string title;  // the machine's name at default_chips
  std::string chip;   // "TPU v5p"
  int torus_dims = 3;
  int max_chips = 0;  // the largest power-of-two slice of the pod
  // An axis of a slice has wrap-around links when its size is a multiple of this: 4 on the 3D
  // tori (whole cubes), 16 on the 2D ones (a whole pod's side).
  int wrap_multiple = 4;
  std::string memory, peak_flops, memory_bandwidth;
  std::string ici_link_bandwidth;  // one way, per link
};

using Preset = std::variant<GpuPreset, TpuPreset>;

const std::vector<Preset>& presets() {
  static const std::vector<Preset> table = {
      GpuPreset{.name = "dgx-h100",
                .title = "dgx-h100: 8x H100 SXM, NVLink 4 through NVSwitch",
                .node = "8x H100 SXM, NVLink 4 through NVSwitch, 8x 400Gb/s InfiniBand NDR",
                .memory = "80GB", .peak_flops = "989TFLOP/s", .memory_bandwidth = "3.35TB/s",
                .generation = "hopper", .host = "x86", .scale_up = "nvswitch",
                .scale_up_bandwidth = "450GB/s", .in_switch_reduction = true,
                .nic_bandwidth = "400Gb/s", .network = "infiniband",
                .algorithms = {{"all_reduce", "ring"}}},
      GpuPreset{.name = "dgx-h100-x4", .default_devices = 32,
                .title = "dgx-h100-x4: 4 boxes of 8x H100 SXM, 400Gb/s InfiniBand NDR per GPU",
                .node = "8x H100 SXM, NVLink 4 through NVSwitch, 8x 400Gb/s InfiniBand NDR",
                .memory = "80GB", .peak_flops = "989TFLOP/s", .memory_bandwidth = "3.35TB/s",
                .generation = "hopper", .host = "x86", .scale_up = "nvswitch",
                .scale_up_bandwidth = "450GB/s", .in_switch_reduction = true,
                .nic_bandwidth = "400Gb/s", .network = "infiniband"},
      GpuPreset{.name = "hgx-a100",
                .title = "hgx-a100: 8x A100 SXM 80GB, NVLink 3 through NVSwitch, 8x 200Gb/s "
                         "InfiniBand HDR",
                .node = "8x A100 SXM 80GB, NVLink 3 through NVSwitch, 8x 200Gb/s InfiniBand HDR",
                .memory = "80GB", .peak_flops = "312TFLOP/s", .memory_bandwidth = "2039GB/s",
                .generation = "ampere", .host = "x86", .scale_up = "nvswitch",
                .scale_up_bandwidth = "300GB/s", .in_switch_reduction = false,
                .nic_bandwidth = "200Gb/s", .network = "infiniband"},
      GpuPreset{.name = "hgx-h100",
                .title = "hgx-h100: 8x H100 SXM 80GB, NVLink 4 through NVSwitch with NVLS, 8x "
                         "400Gb/s InfiniBand NDR",
                .node = "8x H100 SXM 80GB, NVLink 4 through NVSwitch with NVLS, 8x 400Gb/s "
                        "InfiniBand NDR",
                .memory = "80GB", .peak_flops = "989TFLOP/s", .memory_bandwidth = "3.35TB/s",
                .generation = "hopper", .host = "x86", .scale_up = "nvswitch",
                .scale_up_bandwidth = "450GB/s", .in_switch_reduction = true,
                .nic_bandwidth = "400Gb/s", .network = "infiniband"},
      GpuPreset{.name = "hgx-h200",
                .title = "hgx-h200: 8x H200 SXM 141GB, NVLink 4 through NVSwitch with NVLS, 8x "
                         "400Gb/s InfiniBand NDR",
                .node = "8x H200 SXM 141GB, NVLink 4 through NVSwitch with NVLS, 8x 400Gb/s "
                        "InfiniBand NDR",
                .memory = "141GB", .peak_flops = "989TFLOP/s", .memory_bandwidth = "4.8TB/s",
                .generation = "hopper", .host = "x86", .scale_up = "nvswitch",
                .scale_up_bandwidth = "450GB/s", .in_switch_reduction = true,
                .nic_bandwidth = "400Gb/s", .network = "infiniband"},
      GpuPreset{.name = "hgx-b200",
                .title = "hgx-b200: 8x B200 180GB, NVLink 5 through NVSwitch with NVLS, 8x "
                         "400Gb/s InfiniBand NDR",
                .node = "8x B200 180GB, NVLink 5 through NVSwitch with NVLS, 8x 400Gb/s "
                        "InfiniBand NDR",
                .memory = "180GB", .peak_flops = "2.25PFLOP/s", .memory_bandwidth = "8TB/s",
                .generation = "blackwell", .host = "x86", .scale_up = "nvswitch",
                .scale_up_bandwidth = "900GB/s", .in_switch_reduction = true,
                .nic_bandwidth = "400Gb/s", .network = "infiniband"},
      GpuPreset{.name = "hgx-b300",
                .title = "hgx-b300: 8x B300 288GB, NVLink 5 through NVSwitch with NVLS, 8x "
                         "800Gb/s InfiniBand XDR",
                .node = "8x B300 288GB, NVLink 5 through NVSwitch with NVLS, 8x 800Gb/s "
                        "InfiniBand XDR",
                .memory = "288GB", .peak_flops = "2.25PFLOP/s", .memory_bandwidth = "8TB/s",
                .generation = "blackwell", .host = "x86", .scale_up = "nvswitch",
                .scale_up_bandwidth = "900GB/s", .in_switch_reduction = true,
                .nic_bandwidth = "800Gb/s", .network = "infiniband"},
      // A tray holds two superchips (4 GPUs) and four NICs: one NIC per GPU, 72 per domain.
      GpuPreset{.name = "gb200-nvl72", .default_devices = 72,
                .title = "gb200-nvl72: 72x Blackwell GPU 186GB (36 GB200), one NVLink 5 domain "
                         "with NVLS, 400Gb/s ConnectX-7 per GPU",
                .node = "72x Blackwell GPU 186GB (36 GB200), one NVLink 5 domain with NVLS, "
                        "400Gb/s ConnectX-7 per GPU",
                .memory = "186GB", .peak_flops = "2.5PFLOP/s", .memory_bandwidth = "8TB/s",
                .generation = "blackwell", .host = "grace", .devices_per_node = 72,
                .scale_up = "nvswitch", .scale_up_bandwidth = "900GB/s",
                .in_switch_reduction = true, .nics_per_node = 72, .nic_bandwidth = "400Gb/s",
                .network = "infiniband"},
      GpuPreset{.name = "gb300-nvl72", .default_devices = 72,
                .title = "gb300-nvl72: 72x Blackwell Ultra GPU 288GB (36 GB300), one NVLink 5 "
                         "domain with NVLS, 800Gb/s ConnectX-8 per GPU",
                .node = "72x Blackwell Ultra GPU 288GB (36 GB300), one NVLink 5 domain with "
                        "NVLS, 800Gb/s ConnectX-8 per GPU",
                .memory = "288GB", .peak_flops = "2.5PFLOP/s", .memory_bandwidth = "8TB/s",
                .generation = "blackwell", .host = "grace", .devices_per_node = 72,
                .scale_up = "nvswitch", .scale_up_bandwidth = "900GB/s",
                .in_switch_reduction = true, .nics_per_node = 72, .nic_bandwidth = "800Gb/s",
                .network = "infiniband"},
      // A CSCS Alps node: each GPU has 6 NVLinks to each of the other three.
      GpuPreset{.name = "gh200-quad", .default_devices = 4,
                .title = "gh200-quad: 4x GH200 96GB, full mesh of NVLink 4, 4x 200Gb/s "
                         "Slingshot-11",
                .node = "4x GH200 96GB, full mesh of NVLink 4, 4x 200Gb/s Slingshot-11",
                .memory = "96GB", .peak_flops = "989TFLOP/s", .memory_bandwidth = "4TB/s",
                .generation = "hopper", .host = "grace", .devices_per_node = 4,
                .scale_up = "full_mesh", .scale_up_bandwidth = "450GB/s",
                .in_switch_reduction = false, .nics_per_node = 4, .nic_bandwidth = "200Gb/s",
                .network = "slingshot"},
      // Seven xGMI links per GPU, one to each peer.
      GpuPreset{.name = "mi300x",
                .title = "mi300x: 8x MI300X 192GB, full mesh of Infinity Fabric (xGMI), 8x "
                         "400Gb/s RoCE",
                .node = "8x MI300X 192GB, full mesh of Infinity Fabric (xGMI), 8x 400Gb/s RoCE",
                .memory = "192GB", .peak_flops = "1307.4TFLOP/s", .memory_bandwidth = "5.3TB/s",
                .generation = "cdna3", .host = "x86", .scale_up = "full_mesh",
                .scale_up_bandwidth = "448GB/s", .in_switch_reduction = false,
                .nic_bandwidth = "400Gb/s", .network = "roce"},
      GpuPreset{.name = "mi325x",
                .title = "mi325x: 8x MI325X 256GB, full mesh of Infinity Fabric (xGMI), 8x "
                         "400Gb/s RoCE",
                .node = "8x MI325X 256GB, full mesh of Infinity Fabric (xGMI), 8x 400Gb/s RoCE",
                .memory = "256GB", .peak_flops = "1307.4TFLOP/s", .memory_bandwidth = "6TB/s",
                .generation = "cdna3", .host = "x86", .scale_up = "full_mesh",
                .scale_up_bandwidth = "448GB/s", .in_switch_reduction = false,
                .nic_bandwidth = "400Gb/s", .network = "roce"},
      GpuPreset{.name = "mi355x",
                .title = "mi355x: 8x MI355X 288GB, full mesh of Infinity Fabric (xGMI), 8x "
                         "400Gb/s RoCE",
                .node = "8x MI355X 288GB, full mesh of Infinity Fabric (xGMI), 8x 400Gb/s RoCE",
                .memory = "288GB", .peak_flops = "2516.6TFLOP/s", .memory_bandwidth = "8TB/s",
                .generation = "cdna4", .host = "x86", .scale_up = "full_mesh",
                .scale_up_bandwidth = "537.6GB/s", .in_switch_reduction = false,
                .nic_bandwidth = "400Gb/s", .network = "roce"},
      // MI355X's GPU air-cooled: 2.2 GHz instead of 2.4 (256 CUs, 4096 FP16 FLOP per CU and
      // clock), the same memory and Infinity Fabric.
      GpuPreset{.name = "mi350x",
                .title = "mi350x: 8x MI350X 288GB, full mesh of Infinity Fabric (xGMI), 8x "
                         "400Gb/s RoCE",
                .node = "8x MI350X 288GB, full mesh of Infinity Fabric (xGMI), 8x 400Gb/s RoCE",
                .memory = "288GB", .peak_flops = "2306.9TFLOP/s", .memory_bandwidth = "8TB/s",
                .generation = "cdna4", .host = "x86", .scale_up = "full_mesh",
                .scale_up_bandwidth = "537.6GB/s", .in_switch_reduction = false,
                .nic_bandwidth = "400Gb/s", .network = "roce"},
      // DGX-1 with V100: six NVLink 2 links per GPU (25 GB/s each way) in a hybrid cube-mesh,
      // each GPU linked to four of its seven peers (two of them twice). The fabric has no kind
      // for a partial mesh: it is taken as a full mesh of the six links' 150 GB/s.
      GpuPreset{.name = "dgx-1-v100",
                .title = "dgx-1-v100: 8x V100 SXM2 32GB, NVLink 2 hybrid cube-mesh, 4x 100Gb/s "
                         "InfiniBand EDR",
                .node = "8x V100 SXM2 32GB, NVLink 2 hybrid cube-mesh, 4x 100Gb/s InfiniBand EDR",
                .memory = "32GB", .peak_flops = "125TFLOP/s", .memory_bandwidth = "900GB/s",
                .generation = "volta", .host = "x86", .scale_up = "full_mesh",
                .scale_up_bandwidth = "150GB/s", .in_switch_reduction = false,
                .nics_per_node = 4, .nic_bandwidth = "100Gb/s", .network = "infiniband"},
      // DGX-2 (and DGX-2H): 16 V100 SXM3 on twelve first-generation NVSwitches, each GPU's six
      // NVLink 2 links into them.
      GpuPreset{.name = "dgx-2-v100", .default_devices = 16,
                .title = "dgx-2-v100: 16x V100 SXM3 32GB, NVLink 2 through NVSwitch, 8x 100Gb/s "
                         "InfiniBand EDR",
                .node = "16x V100 SXM3 32GB, NVLink 2 through NVSwitch, 8x 100Gb/s InfiniBand EDR",
                .memory = "32GB", .peak_flops = "125TFLOP/s", .memory_bandwidth = "900GB/s",
                .generation = "volta", .host = "x86", .devices_per_node = 16,
                .scale_up = "nvswitch", .scale_up_bandwidth = "150GB/s",
                .in_switch_reduction = false, .nics_per_node = 8, .nic_bandwidth = "100Gb/s",
                .network = "infiniband"},
      // PCIe servers: eight cards behind PCIe switches (any pair at the card's x16 rate each way,
      // drawn as a switch), a NIC per two GPUs. NVLink bridges between pairs of cards are not
      // modelled: collectives over more than two GPUs cross PCIe.
      GpuPreset{.name = "pcie-v100",
                .title = "pcie-v100: 8x V100 PCIe 32GB, PCIe Gen3 x16, 4x 100Gb/s InfiniBand EDR",
                .node = "8x V100 PCIe 32GB, PCIe Gen3 x16, 4x 100Gb/s InfiniBand EDR",
                .memory = "32GB", .peak_flops = "112TFLOP/s", .memory_bandwidth = "900GB/s",
                .generation = "volta", .host = "x86", .scale_up = "nvswitch",
                .scale_up_bandwidth = "16GB/s", .in_switch_reduction = false,
                .nics_per_node = 4, .nic_bandwidth = "100Gb/s", .network = "infiniband"},
      GpuPreset{.name = "pcie-a100",
                .title = "pcie-a100: 8x A100 PCIe 80GB, PCIe Gen4 x16, 4x 200Gb/s InfiniBand HDR",
                .node = "8x A100 PCIe 80GB, PCIe Gen4 x16, 4x 200Gb/s InfiniBand HDR",
                .memory = "80GB", .peak_flops = "312TFLOP/s", .memory_bandwidth = "1935GB/s",
                .generation = "ampere", .host = "x86", .scale_up = "nvswitch",
                .scale_up_bandwidth = "32GB/s", .in_switch_reduction = false,
                .nics_per_node = 4, .nic_bandwidth = "200Gb/s", .network = "infiniband"},
      GpuPreset{.name = "pcie-h100",
                .title = "pcie-h100: 8x H100 PCIe 80GB, PCIe Gen5 x16, 4x 400Gb/s InfiniBand NDR",
                .node = "8x H100 PCIe 80GB, PCIe Gen5 x16, 4x 400Gb/s InfiniBand NDR",
                .memory = "80GB", .peak_flops = "756.5TFLOP/s", .memory_bandwidth = "2TB/s",
                .generation = "hopper", .host = "x86", .scale_up = "nvswitch",
                .scale_up_bandwidth = "64GB/s", .in_switch_reduction = false,
                .nics_per_node = 4, .nic_bandwidth = "400Gb/s", .network = "infiniband"},
      GpuPreset{.name = "pcie-h100-nvl",
                .title = "pcie-h100-nvl: 8x H100 NVL 94GB, PCIe Gen5 x16 (NVLink bridge pairs), "
                         "4x 400Gb/s InfiniBand NDR",
                .node = "8x H100 NVL 94GB, PCIe Gen5 x16 (NVLink bridge pairs), 4x 400Gb/s "
                        "InfiniBand NDR",
                .memory = "94GB", .peak_flops = "835.5TFLOP/s", .memory_bandwidth = "3.9TB/s",
                .generation = "hopper", .host = "x86", .scale_up = "nvswitch",
                .scale_up_bandwidth = "64GB/s", .in_switch_reduction = false,
                .nics_per_node = 4, .nic_bandwidth = "400Gb/s", .network = "infiniband"},
      // An HPE Cray EX235a node (Frontier): 4 MI250X, 8 GCDs, each a device. A GCD has seven
      // Infinity Fabric links of 50 GB/s each way: four to the other GCD of its package (200
      // GB/s), three to GCDs of other packages (50 or 100 GB/s to a peer). The fabric has no
      // kind for a partial mesh: it is taken as a full mesh of the seven links' 350 GB/s. One
      // Slingshot-11 NIC per package.
      GpuPreset{.name = "mi250x",
                .title = "mi250x: 4x MI250X (8 GCDs of 64GB), Infinity Fabric, 4x 200Gb/s "
                         "Slingshot-11",
                .node = "4x MI250X (8 GCDs of 64GB), Infinity Fabric, 4x 200Gb/s Slingshot-11",
                .memory = "64GB", .peak_flops = "191.5TFLOP/s", .memory_bandwidth = "1638.4GB/s",
                .generation = "cdna2", .host = "x86", .scale_up = "full_mesh",
                .scale_up_bandwidth = "350GB/s", .in_switch_reduction = false,
                .nics_per_node = 4, .nic_bandwidth = "200Gb/s", .network = "slingshot"},
      TpuPreset{.name = "tpu-v4-64", .default_chips = 64,
                .title = "tpu-v4-64: TPU v4 4x4x4 cube, 3D torus", .chip = "TPU v4",
                .torus_dims = 3, .max_chips = 4096, .wrap_multiple = 4, .memory = "32GiB",
                .peak_flops = "275TFLOP/s", .memory_bandwidth = "1200GB/s",
                .ici_link_bandwidth = "45GB/s"},
      TpuPreset{.name = "tpu-v5e-256", .default_chips = 256,
                .title = "tpu-v5e-256: TPU v5e 16x16 pod, 2D torus", .chip = "TPU v5e",
                .torus_dims = 2, .max_chips = 256, .wrap_multiple = 16, .memory = "16GB",
                .peak_flops = "197TFLOP/s", .memory_bandwidth = "819GB/s",
                .ici_link_bandwidth = "45GB/s"},
      TpuPreset{.name = "tpu-v5p", .default_chips = 64,
                .title = "tpu-v5p: TPU v5p 4x4x4 cube, 3D torus", .chip = "TPU v5p",
                .torus_dims = 3, .max_chips = 4096, .wrap_multiple = 4, .memory = "95GB",
                .peak_flops = "459TFLOP/s", .memory_bandwidth = "2765GB/s",
                .ici_link_bandwidth = "90GB/s"},
      TpuPreset{.name = "tpu-v6e", .default_chips = 256,
                .title = "tpu-v6e: TPU v6e 16x16 pod, 2D torus", .chip = "TPU v6e",
                .torus_dims = 2, .max_chips = 256, .wrap_multiple = 16, .memory = "32GB",
                .peak_flops = "918TFLOP/s", .memory_bandwidth = "1638GB/s",
                .ici_link_bandwidth = "90GB/s"},
  };
  return table;
}

const std::string& name_of(const Preset& preset) {
  return std::visit([](const auto& p) -> const std::string& { return p.name; }, preset);
}

const Preset* find_preset(const std::string& name) {
  for (const Preset& preset : presets()) {
    if (name_of(preset) == name) return &preset;
  }
  return nullptr;
}

json link_json(std::int64_t bandwidth_bytes_per_s, std::string_view latency) {
  return {{"bandwidth", exact_bandwidth_text(bandwidth_bytes_per_s)},
          {"latency", std::string(latency)}};
}

std::int64_t bandwidth_of(const std::string& text) {
  return parse_bandwidth_bytes_per_s(text, "preset bandwidth");
}

// ---- GPU machines

json fabric_json(const GpuPreset& p) {
  return {{"generation", p.generation},
          {"host", p.host},
          {"devices_per_node", p.devices_per_node},
          {"scale_up", p.scale_up},
          {"scale_up_bandwidth", p.scale_up_bandwidth},
          {"in_switch_reduction", p.in_switch_reduction},
          {"nics_per_node", p.nics_per_node},
          {"nic_bandwidth", p.nic_bandwidth},
          {"network", p.network}};
}

// One node: a switch for NVSwitch; for a full mesh, a direct link to every peer, each carrying
// the GPU's scale-up rate shared over its peers (MI300X: 448 GB/s over 7 links of 64 GB/s).
// Several nodes: each node's GPUs on a switch at the scale-up rate, and each GPU's share of its
// node's NICs into the network.
json gpu_topology_json(const GpuPreset& p, int devices) {
  const std::int64_t scale_up = bandwidth_of(p.scale_up_bandwidth);
  if (devices > p.devices_per_node) {
    const std::int64_t nic_share =
        bandwidth_of(p.nic_bandwidth) * p.nics_per_node / p.devices_per_node;
    return {{"kind", "hierarchical"},
            {"devices_per_node", p.devices_per_node},
            {"intra_node_link", link_json(scale_up, kSwitchPortLatency)},
            {"inter_node_link", link_json(nic_share, kNetworkLatency)}};
  }
  if (p.scale_up == "full_mesh") {
    return {{"kind", "fully_connected"},
            {"link", link_json(scale_up / (p.devices_per_node - 1), kDirectLinkLatency)}};
  }
  return {{"kind", "switch"}, {"link", link_json(scale_up, kSwitchPortLatency)}};
}

void check_gpu_devices(const GpuPreset& p, int devices) {
  if (devices < 1 || !sim::devices_fit_nodes(devices, p.devices_per_node)) {
    throw Error(fmt::format("{} takes 1 to {} devices (part of one node) or a multiple of {} "
                            "(whole nodes), not {}",
                            p.name, p.devices_per_node, p.devices_per_node, devices));
  }
}

std::string gpu_machine_name(const GpuPreset& p, int devices) {
  if (devices == p.default_devices) return p.title;
  if (devices < p.devices_per_node) {
    return fmt::format("{} slice of {} devices: {}", p.name, devices, p.node);
  }
  const int nodes = devices / p.devices_per_node;
  return fmt::format("{} x{} node{} ({} devices): {}", p.name, nodes, nodes == 1 ? "" : "s",
                     devices, p.node);
}

json gpu_machine_json(const GpuPreset& p, int devices) {
  check_gpu_devices(p, devices);
  json machine = {
      {"name", gpu_machine_name(p, devices)},
      {"devices", devices},
      {"memory", p.memory},
      {"compute", {{"peak_flops", p.peak_flops}, {"memory_bandwidth", p.memory_bandwidth}}},
      {"topology", gpu_topology_json(p, devices)},
      {"fabric", fabric_json(p)}};
  if (!p.algorithms.empty()) machine["algorithms"] = p.algorithms;
  return machine;
}

// ---- TPU slices

// The sizes of a power-of-two slice of `chips` chips over `dimensions` axes, as even as they
// can be and smallest first (64 chips, 3 axes: 4x4x4; 128: 4x4x8; 128 over 2 axes: 8x16).
std::vector<int> slice_dims(int chips, int dimensions) {
  const int log2_chips = std::countr_zero(static_cast<unsigned>(chips));
  std::vector<int> dims;
  for (int axis = 0; axis < dimensions; ++axis) {
    // Axes later in the list take the remainder, so the sizes grow.
    const int log2_size = (log2_chips + axis) / dimensions;
    dims.push_back(1 << log2_size);
  }
  return dims;
}

void check_tpu_chips(const TpuPreset& p, int chips) {
  if (chips < 1 || chips > p.max_chips || !std::has_single_bit(static_cast<unsigned>(chips))) {
    throw Error(fmt::format("{} takes a power of two from 1 to {} chips (a slice of the pod), "
                            "not {}",
                            p.name, p.max_chips, chips));
  }
}

json tpu_machine_json(const TpuPreset& p, int chips) {
  check_tpu_chips(p, chips);
  const std::vector<int> dims = slice_dims(chips, p.torus_dims);
  // An axis of 1 or 2 is the same either way; a longer one wraps only at whole cubes or a whole
  // pod's side. A torus needs every axis to wrap, so a slice where one does not is a mesh.
  bool wraps = true;
  for (int size : dims) wraps = wraps && (size <= 2 || size % p.wrap_multiple == 0);
  const std::string kind = wraps ? "torus" : "mesh";
  const std::string name =
      chips == p.default_chips
          ? p.title
          : fmt::format("{} {} slice ({} chips): {}, {}D {}", p.name, fmt::join(dims, "x"),
                        chips, p.chip, p.torus_dims, kind);
  return {{"name", name},
          {"devices", chips},
          {"memory", p.memory},
          {"compute", {{"peak_flops", p.peak_flops}, {"memory_bandwidth", p.memory_bandwidth}}},
          {"topology",
           {{"kind", kind},
            {"dims", dims},
            {"link", link_json(bandwidth_of(p.ici_link_bandwidth), kIciHopLatency)}}}};
}

int default_devices_of(const Preset& preset) {
  if (const auto* gpu = std::get_if<GpuPreset>(&preset)) return gpu->default_devices;
  return std::get<TpuPreset>(preset).default_chips;
}

json machine_json(const Preset& preset, int devices) {
  if (const auto* gpu = std::get_if<GpuPreset>(&preset)) return gpu_machine_json(*gpu, devices);
  return tpu_machine_json(std::get<TpuPreset>(preset), devices);
}

}  // namespace

std::vector<std::string> machine_preset_names() {
  std::vector<std::string> names;
  for (const Preset& preset : presets()) names.push_back(name_of(preset));
  return names;
}

std::optional<sim::MachineSpec> machine_preset(const std::string& name) {
  const Preset* preset = find_preset(name);
  if (preset == nullptr) return std::nullopt;
  return machine_preset_with_devices(name, default_devices_of(*preset));
}

sim::MachineSpec machine_preset_with_devices(const std::string& name, int devices) {
  const Preset* preset = find_preset(name);
  if (preset == nullptr) {
    throw Error(fmt::format("machine preset {}: no such preset, expected one of {}",
                            path_for_message(name), fmt::join(machine_preset_names(), ", ")));
  }
  // Presets are machine files (docs/machine-format.md), so that presets and files share one
  // reader and its checks.
  return sim::machine_from_json(machine_json(*preset, devices));
}

sim::MachineSpec machine_from_name_or_file(const std::string& name_or_path) {
  if (std::optional<sim::MachineSpec> preset = machine_preset(name_or_path)) return *preset;
  std::error_code no_file;  // a path too long or looping is not a file either
  if (!std::filesystem::exists(name_or_path, no_file)) {
    throw Error(
        fmt::format("machine {}: no such preset or file, expected a machine file or one of {}",
                    path_for_message(name_or_path), fmt::join(machine_preset_names(), ", ")));
  }
  return sim::load_machine_file(name_or_path);
}

}  // namespace spmd
