#pragma once
// A machine as a collective library sees it: nodes of GPUs joined by a scale-up fabric (NVLink
// through NVSwitch, or a full mesh of xGMI / NVLink links), and NICs between nodes. This is what
// the protocol-level timing (cost_model/collective_timing.h) computes with; the machine file's
// "fabric" section (docs/machine-format.md) and the presets (docs/machine-presets.md) write it.

#include <cstdint>
#include <optional>
#include <string_view>

namespace spmd::cost_model {

// The accelerator generation: it sets the library (NCCL for NVIDIA, RCCL for AMD) and the
// per-generation caps of the protocols (docs/collective-timing.md). Volta (V100) and CDNA 2
// (MI250X) are the oldest parts published training runs use.
enum class GpuGeneration { volta, ampere, hopper, blackwell, cdna2, cdna3, cdna4 };

// The host CPU that launches kernels: it sets the GPU's fixed part of every collective and the
// host's interval between issuing two (x86 over PCIe, or Grace over NVLink-C2C).
enum class HostKind { x86, grace };

// nvswitch: every GPU has one port group into a switch, so any pair of GPUs in the domain talks
// at the GPU's full rate. full_mesh: one direct link to each peer (MI300X's xGMI, a GH200 quad),
// so a single ring uses 1/(peers) of a GPU's links and the library spreads channels over all.
enum class ScaleUpKind { nvswitch, full_mesh };

// The network between nodes.
enum class NetworkKind { infiniband, roce, slingshot, efa, ethernet };

// What the owner of a machine measured on it, where a spec sheet says nothing: the fitted values
// `spmdsim calibrate` writes from nccl-tests outputs (docs/calibrate.md). Each that is set
// replaces the constant docs/collective-timing.md gives for the machine's generation, host or
// network; the library still chooses its algorithm by its own tuner's estimate, as NCCL does.
struct MeasuredTiming {
  // The GPU's fixed part of a collective, beyond its hops: launching the kernel and learning it
  // finished (not NVLS's, whose fixed cost is the switches').
  std::optional<std::int64_t> launch_latency_ps;
  // One hop over the network with the Simple protocol; LL's and LL128's hops keep their ratio
  // to it for the machine's network.
  std::optional<std::int64_t> network_latency_ps;
  // The share of a NIC's rate, and of the scale-up links' rate, that a ring's data reaches with
  // every channel busy, in (0, 1].
  std::optional<double> network_efficiency;
  std::optional<double> scale_up_efficiency;
  bool operator==(const MeasuredTiming&) const = default;
};

struct Fabric {
  GpuGeneration generation = GpuGeneration::hopper;
  HostKind host = HostKind::x86;
  int devices_per_node = 8;  // the scale-up (NVLink) domain: 72 on an NVL72 rack
  ScaleUpKind scale_up = ScaleUpKind::nvswitch;
  // Per GPU, per direction, all of its scale-up links together (H100: 18 x 25 GB/s = 450 GB/s).
  std::int64_t scale_up_bytes_per_s = 450'000'000'000;
  bool in_switch_reduction = false;   // NVLink SHARP (NVLS) in the switches
  bool in_network_reduction = false;  // the network's switches reduce (InfiniBand SHARP): CollNet
  int nics_per_node = 0;
  std::int64_t nic_bytes_per_s = 0;  // per NIC, per direction (400 Gb/s NDR: 50 GB/s)
  NetworkKind network = NetworkKind::infiniband;
  // How the program launches its collectives (docs/collective-timing.md, "Launch"): how many of
  // a node's GPUs one process drives (nccl-tests -g N; a JAX process drives every GPU of its
  // host), and whether the launches are captured in a CUDA or HIP graph (nccl-tests -G 1).
  int gpus_per_process = 1;
  bool graph_launch = false;
  MeasuredTiming measured;
};

// The nodes `devices` devices fill, devices_per_node to a node (the last one may be partly
// filled).
int nodes_of(const Fabric& fabric, int devices);

// AMD's generations, whose library is RCCL; the others are NVIDIA's (NCCL).
bool is_amd(GpuGeneration generation);

std::string_view generation_name(GpuGeneration generation);
std::string_view host_kind_name(HostKind host);
std::string_view scale_up_kind_name(ScaleUpKind kind);
std::string_view network_kind_name(NetworkKind kind);
// The inverses; spmd::Error listing the names when `name` is none of them.
GpuGeneration generation_from_name(std::string_view name);
HostKind host_kind_from_name(std::string_view name);
ScaleUpKind scale_up_kind_from_name(std::string_view name);
NetworkKind network_kind_from_name(std::string_view name);

}  // namespace spmd::cost_model
