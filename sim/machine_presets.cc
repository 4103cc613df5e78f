#include "sim/machine_presets.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <utility>

#include "reference/error.h"
#include "reference/input_file.h"

namespace spmd {
namespace {

// Written in the machine file format (docs/machine-format.md) so that presets and files share
// one reader. Sources: docs/machine-presets.md.
const std::vector<std::pair<std::string, const char*>>& presets() {
  static const std::vector<std::pair<std::string, const char*>> table = {
      {"dgx-h100", R"({
        "name": "dgx-h100: 8x H100 SXM, NVLink 4 through NVSwitch",
        "devices": 8, "memory": "80GB",
        "compute": {"peak_flops": "989TFLOP/s", "memory_bandwidth": "3.35TB/s"},
        "topology": {"kind": "switch", "link": {"bandwidth": "450GB/s", "latency": "0.5us"}},
        "algorithms": {"all_reduce": "ring"}})"},
      {"dgx-h100-x4", R"({
        "name": "dgx-h100-x4: 4 boxes of 8x H100 SXM, 400Gb/s InfiniBand NDR per GPU",
        "devices": 32, "memory": "80GB",
        "compute": {"peak_flops": "989TFLOP/s", "memory_bandwidth": "3.35TB/s"},
        "topology": {"kind": "hierarchical", "devices_per_node": 8,
                     "intra_node_link": {"bandwidth": "450GB/s", "latency": "0.5us"},
                     "inter_node_link": {"bandwidth": "400Gb/s", "latency": "5us"}}})"},
      {"tpu-v4-64", R"({
        "name": "tpu-v4-64: TPU v4 4x4x4 cube, 3D torus",
        "devices": 64, "memory": "32GiB",
        "compute": {"peak_flops": "275TFLOP/s", "memory_bandwidth": "1200GB/s"},
        "topology": {"kind": "torus", "dims": [4, 4, 4],
                     "link": {"bandwidth": "45GB/s", "latency": "1us"}}})"},
      {"tpu-v5e-256", R"({
        "name": "tpu-v5e-256: TPU v5e 16x16 pod, 2D torus",
        "devices": 256, "memory": "16GB",
        "compute": {"peak_flops": "197TFLOP/s", "memory_bandwidth": "819GB/s"},
        "topology": {"kind": "torus", "dims": [16, 16],
                     "link": {"bandwidth": "45GB/s", "latency": "1us"}}})"},
  };
  return table;
}

}  // namespace

std::vector<std::string> machine_preset_names() {
  std::vector<std::string> names;
  for (const auto& [name, json] : presets()) names.push_back(name);
  return names;
}

std::optional<sim::MachineSpec> machine_preset(const std::string& name) {
  for (const auto& [preset, text] : presets()) {
    if (preset == name) return sim::machine_from_json(nlohmann::json::parse(text));
  }
  return std::nullopt;
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
