#pragma once
// The machine a calibration row describes in words, as the collective library sees it: the GPU's
// name picks a preset (sim/machine_presets.h), whose fabric is then fitted to the row: its GPUs
// per node and its NICs as the `nic` text gives them. docs/validation.md lists the rules.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cost_model/fabric.h"
#include "validation/calibration_row.h"

namespace spmd {

struct CalibrationMachine {
  std::string preset;  // "hgx-h100"
  cost_model::Fabric fabric;
};

// The fabric of the machine the description names; spmd::Error naming the GPU (or the field)
// when it names no machine spmdsim knows, or one that cannot be as described.
CalibrationMachine calibration_machine(const MachineDescription& machine);

// ---- The pieces, for tests.

// The preset a GPU's name stands for: the first of GB300, GB200, GH200, MI355X, MI350X, MI325X,
// MI300X, B300, B200, H200, H800, H100, H20, A800, A100 found in it, in any case ("NVIDIA H100
// 80GB HBM3" gives hgx-h100). spmd::Error "gpu 'TEXT': ..." listing the names otherwise.
struct GpuPreset {
  std::string_view preset;
  // The preset's NVLink domain spans the rows' "nodes" (an NVL72 rack's trays).
  bool nvlink_domain_spans_nodes = false;
  // Per direction, replacing the preset's (H800: NVLink cut to 400 GB/s both ways).
  std::optional<std::int64_t> scale_up_bytes_per_s;
};
GpuPreset preset_for_gpu(std::string_view gpu);

// What a `nic` text says, each part absent when it does not say it: "8x 400 Gb/s",
// "8 x 400G NDR", "ConnectX-7 NDR 400G" (NDR 400, HDR 200, XDR 800, EDR 100 Gb/s),
// "4 x 200 Gb/s Slingshot"; the network from keywords (InfiniBand / IB / NDR / HDR / XDR / EDR:
// infiniband; TCPX / TCPXO / socket: ethernet; RoCE / Ethernet / Spectrum / Thor2 / Pollara:
// roce; Slingshot / CXI: slingshot; EFA: efa).
// Text that starts with "n/a" says nothing.
struct NicDescription {
  std::optional<int> nics_per_node;
  std::optional<std::int64_t> nic_bytes_per_s;  // per NIC, per direction
  std::optional<cost_model::NetworkKind> network;
  bool operator==(const NicDescription&) const = default;
};
NicDescription parse_nic_text(std::string_view nic);

// The preset's fabric fitted to the description (the GPU's preset already chosen): GPUs per
// node (unless the NVLink domain spans nodes and the row does not put its nodes in separate
// domains), a full mesh's bandwidth scaled to the peers present, and the NICs the text gives
// (or, for a rack's trays in separate domains, the trays' share of the preset's), on the network
// the nic text names, else the one the interconnect text names, else the preset's.
cost_model::Fabric fitted_fabric(cost_model::Fabric fabric, const GpuPreset& gpu_preset,
                                 const MachineDescription& machine);

}  // namespace spmd
