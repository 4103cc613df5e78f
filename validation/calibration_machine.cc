#include "validation/calibration_machine.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <regex>
#include <set>
#include <vector>

#include "reference/check.h"
#include "reference/error.h"
#include "sim/machine_presets.h"
#include "support/json_reader.h"
#include "support/name_lists.h"

namespace spmd {
namespace {

using cost_model::Fabric;
using cost_model::NetworkKind;

struct GpuName {
  std::string_view name;  // as found in a GPU's full name, upper case
  GpuPreset preset;
};

// Longer names first where one holds another: GB200 holds B200, GB300 B300, GH200 and H200
// hold H20. The export variants keep their board's fabric but for NVLink: H800 and A800 cut it
// to 400 GB/s bidirectional, 200 GB/s each way (NVIDIA H800 SXM5 and A800 SXM4 datasheets); H20
// keeps H100's 900 GB/s (NVIDIA H20 datasheet; its compute, which collectives do not use, is
// cut). V100 SXM3 boards sit in DGX-2 (16 on NVSwitch), SXM2 boards in DGX-1 (8, NVLink 2); an
// MI250X or MI250 is two GCDs, the devices NCCL's counterpart RCCL sees, eight to a node.
const std::array<GpuName, 19>& gpu_names() {
  static const std::array<GpuName, 19> names = {{
      {"GB300", {"gb300-nvl72", true, std::nullopt}},
      {"GB200", {"gb200-nvl72", true, std::nullopt}},
      {"GH200", {"gh200-quad", false, std::nullopt}},
      {"MI355X", {"mi355x", false, std::nullopt}},
      {"MI350X", {"mi350x", false, std::nullopt}},
      {"MI325X", {"mi325x", false, std::nullopt}},
      {"MI300X", {"mi300x", false, std::nullopt}},
      {"B300", {"hgx-b300", false, std::nullopt}},
      {"B200", {"hgx-b200", false, std::nullopt}},
      {"H200", {"hgx-h200", false, std::nullopt}},
      {"H800", {"hgx-h100", false, 200'000'000'000}},
      {"H100", {"hgx-h100", false, std::nullopt}},
      {"H20", {"hgx-h100", false, std::nullopt}},
      {"A800", {"hgx-a100", false, 200'000'000'000}},
      {"A100", {"hgx-a100", false, std::nullopt}},
      {"DGX-2", {"dgx-2-v100", false, std::nullopt}},
      {"SXM3", {"dgx-2-v100", false, std::nullopt}},
      {"V100", {"dgx-1-v100", false, std::nullopt}},
      {"MI250", {"mi250x", false, std::nullopt}},
  }};
  return names;
}

// The text's words: runs of letters and digits ("FI_CXI_*" gives "fi", "cxi").
std::set<std::string> words_of(const std::string& lower) {
  std::set<std::string> words;
  std::string word;
  for (char c : lower + ' ') {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += c;
    } else if (!word.empty()) {
      words.insert(word);
      word.clear();
    }
  }
  return words;
}

bool has_any(const std::set<std::string>& words, std::initializer_list<std::string_view> keys) {
  return std::any_of(keys.begin(), keys.end(),
                     [&](std::string_view key) { return words.contains(std::string(key)); });
}

// A RoCE or Ethernet NIC may be named by its InfiniBand-era card (ConnectX), so the network's
// own name wins over InfiniBand's rate words. A GPU cluster's Ethernet NICs run RDMA (RoCE):
// only GPUDirect-TCPX(O) and NCCL's socket transport carry collectives over TCP.
std::optional<NetworkKind> network_of(const std::set<std::string>& words) {
  if (has_any(words, {"tcpx", "tcpxo", "socket", "sockets"})) return NetworkKind::ethernet;
  if (has_any(words, {"roce", "rocev2", "ethernet", "spectrum", "thor2", "pollara"})) {
    return NetworkKind::roce;
  }
  if (has_any(words, {"slingshot", "cxi"})) return NetworkKind::slingshot;
  if (has_any(words, {"efa"})) return NetworkKind::efa;
  if (has_any(words, {"infiniband", "ib", "ndr", "hdr", "xdr", "edr"})) {
    return NetworkKind::infiniband;
  }
  return std::nullopt;
}

// InfiniBand's rate names, per port (InfiniBand Trade Association roadmap).
std::optional<double> rate_word_gbps(const std::set<std::string>& words) {
  if (words.contains("xdr")) return 800;
  if (words.contains("ndr")) return 400;
  if (words.contains("hdr")) return 200;
  if (words.contains("edr")) return 100;
  return std::nullopt;
}

std::int64_t gbps_to_bytes_per_s(double gbps) { return std::llround(gbps * 1e9 / 8); }

// A number not glued to a word or another number before it ("1.13.0" holds none).
constexpr const char* kNumberStart = R"((?:^|[^\w.]))";
// Gigabits per second: "400 Gb/s", "400Gbps", "400 Gbit/s", "400GbE", "400G"; not "80GB" (bytes).
constexpr const char* kGigabits = R"(\s*(?:gb/s|gbps|gbit/s|gbit|gbe|g)(?![a-z0-9]))";

// The text in lower case, with the multiplication sign written as an x ("8×400G": 8x 400G).
std::string nic_words(std::string_view nic) {
  static const std::regex times("\u00d7");
  return std::regex_replace(ascii_lowercase(nic), times, "x");
}

}  // namespace

GpuPreset preset_for_gpu(std::string_view gpu) {
  const std::string lower = ascii_lowercase(gpu);
  // The presets are SXM / OAM boards on NVLink or xGMI; a PCIe card of the same name talks over
  // PCIe (and at most a bridge), which no preset describes. H100 NVL and H200 NVL are such cards
  // (NVL without a domain size, unlike the NVL72 racks).
  static const std::regex pcie_nvl(R"(\bnvl\b)");
  if (lower.find("pcie") != std::string::npos || std::regex_search(lower, pcie_nvl)) {
    throw Error(fmt::format("gpu '{}': a PCIe card, expected an SXM or OAM GPU (the presets' "
                            "NVLink and xGMI boards)",
                            shortened_text(gpu)));
  }
  std::vector<std::string_view> known;
  for (const GpuName& name : gpu_names()) {
    if (lower.find(ascii_lowercase(name.name)) != std::string::npos) return name.preset;
    known.push_back(name.name);
  }
  throw Error(fmt::format("gpu '{}': expected a name holding one of {} (the GPUs with presets)",
                          shortened_text(gpu), or_list(known)));
}

NicDescription parse_nic_text(std::string_view nic) {
  const std::string lower = nic_words(nic);
  if (lower.starts_with("n/a")) return {};
  const std::set<std::string> words = words_of(lower);
  NicDescription description{std::nullopt, std::nullopt, network_of(words)};
  static const std::regex count_and_rate(std::string(kNumberStart) +
                                         R"((\d+)\s*x\s*(\d+(?:\.\d+)?))" + kGigabits);
  static const std::regex count_only(std::string(kNumberStart) + R"((\d+)\s*x(?![a-z]))");
  static const std::regex rate_only(std::string(kNumberStart) + R"((\d+(?:\.\d+)?))" + kGigabits);
  std::smatch match;
  if (std::regex_search(lower, match, count_and_rate)) {
    description.nics_per_node = std::stoi(match[1].str());
    description.nic_bytes_per_s = gbps_to_bytes_per_s(std::stod(match[2].str()));
    return description;
  }
  if (std::regex_search(lower, match, count_only)) {
    description.nics_per_node = std::stoi(match[1].str());
  }
  if (std::regex_search(lower, match, rate_only)) {
    description.nic_bytes_per_s = gbps_to_bytes_per_s(std::stod(match[1].str()));
  } else if (const std::optional<double> gbps = rate_word_gbps(words)) {
    description.nic_bytes_per_s = gbps_to_bytes_per_s(*gbps);
  }
  if (description.nics_per_node && *description.nics_per_node < 1) {
    throw Error(fmt::format("nic '{}': 0 NICs, expected at least 1", shortened_text(nic)));
  }
  return description;
}

Fabric fitted_fabric(Fabric fabric, const GpuPreset& gpu_preset,
                     const MachineDescription& machine) {
  if (gpu_preset.scale_up_bytes_per_s)
    fabric.scale_up_bytes_per_s = *gpu_preset.scale_up_bytes_per_s;
  const int preset_per_node = fabric.devices_per_node;
  if (machine.gpus_per_node > preset_per_node) {
    throw Error(fmt::format(
        "gpus_per_node {}: the {} preset ({}) has {} GPUs per NVLink domain, "
        "expected at most {}",
        machine.gpus_per_node, gpu_preset.preset, machine.gpu, preset_per_node, preset_per_node));
  }
  // An NVL72 rack's trays share its NVLink domain unless the row says they are in different
  // ones while all its GPUs would fit in one: then each tray is a node of its own, with its share
  // of the rack's NICs. More GPUs than one domain holds already span several racks, which is
  // what such a text then says.
  const bool domain_spans_nodes =
      gpu_preset.nvlink_domain_spans_nodes &&
      !(machine.nodes_in_separate_nvlink_domains() && machine.gpus_total <= preset_per_node);
  if (gpu_preset.nvlink_domain_spans_nodes && !domain_spans_nodes && fabric.nics_per_node > 0) {
    fabric.nics_per_node =
        std::max(1, fabric.nics_per_node * machine.gpus_per_node / preset_per_node);
  }
  if (!domain_spans_nodes) {
    // In a full mesh each GPU has one link per peer; with fewer GPUs it uses only the links to
    // those present. Through a switch every GPU keeps its whole rate.
    if (fabric.scale_up == cost_model::ScaleUpKind::full_mesh && machine.gpus_per_node >= 2) {
      fabric.scale_up_bytes_per_s =
          fabric.scale_up_bytes_per_s * (machine.gpus_per_node - 1) / (preset_per_node - 1);
    }
    fabric.devices_per_node = machine.gpus_per_node;
  }
  const NicDescription nic = parse_nic_text(machine.nic);
  if (nic.nics_per_node) {
    // The text counts the NICs of one of the row's nodes (an NVL72 rack's tray); an NVLink
    // domain that spans several of them has all their NICs.
    // (gpus_per_node is at most devices_per_node, checked above.)
    const int row_nodes_per_domain =
        domain_spans_nodes ? fabric.devices_per_node / machine.gpus_per_node : 1;
    fabric.nics_per_node = *nic.nics_per_node * row_nodes_per_domain;
  }
  if (nic.nic_bytes_per_s) fabric.nic_bytes_per_s = *nic.nic_bytes_per_s;
  if (nic.network) {
    fabric.network = *nic.network;
  } else if (const std::optional<NetworkKind> network =
                 network_of(words_of(ascii_lowercase(machine.interconnect)))) {
    // "NVLink inside the node + RoCE between nodes": the interconnect names the network.
    fabric.network = *network;
  }
  if (machine.gpus_total > fabric.devices_per_node &&
      (fabric.nics_per_node < 1 || fabric.nic_bytes_per_s < 1)) {
    throw Error(fmt::format(
        "nic '{}': {} GPUs span more than one NVLink domain of {}, but neither this text nor the "
        "{} preset gives NICs; expected a count and rate such as '8x 400 Gb/s'",
        shortened_text(machine.nic), machine.gpus_total, fabric.devices_per_node,
        gpu_preset.preset));
  }
  return fabric;
}

CalibrationMachine calibration_machine(const MachineDescription& machine) {
  const GpuPreset gpu_preset = preset_for_gpu(machine.gpu);
  const std::string preset_name(gpu_preset.preset);
  const std::optional<sim::MachineSpec> preset = machine_preset(preset_name);
  SPMD_CHECK(preset.has_value() && preset->fabric.has_value(),
             fmt::format("the preset {} that {} stands for is missing or has no fabric",
                         preset_name, machine.gpu));
  return {preset_name, fitted_fabric(*preset->fabric, gpu_preset, machine)};
}

}  // namespace spmd
