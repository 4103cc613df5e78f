#include "training/activation_offload.h"

#include <algorithm>

namespace spmd::training {

namespace {
// NVIDIA's GH200 / GB200 datasheets: NVLink-C2C, 900 GB/s both ways. PCIe x16 per direction:
// Gen3 16 GB/s (V100), Gen4 32 GB/s (A100, MI250X), Gen5 64 GB/s (H100, B200, MI300X): the
// PCI-SIG rates.
constexpr double kNvlinkC2cBytesPerS = 450e9;
constexpr double kPcieGen3x16BytesPerS = 16e9;
constexpr double kPcieGen4x16BytesPerS = 32e9;
constexpr double kPcieGen5x16BytesPerS = 64e9;
}  // namespace

double host_link_bytes_per_s(cost_model::GpuGeneration generation, cost_model::HostKind host) {
  if (host == cost_model::HostKind::grace) return kNvlinkC2cBytesPerS;
  if (generation == cost_model::GpuGeneration::volta) return kPcieGen3x16BytesPerS;
  if (generation == cost_model::GpuGeneration::ampere ||
      generation == cost_model::GpuGeneration::cdna2) {
    return kPcieGen4x16BytesPerS;
  }
  return kPcieGen5x16BytesPerS;
}

double exposed_offload_seconds(double layer_activation_bytes, double layer_forward_s,
                               double layer_backward_s, double link_bytes_per_s) {
  const double copy_s = layer_activation_bytes / link_bytes_per_s;
  return std::max(0.0, copy_s - layer_forward_s) + std::max(0.0, copy_s - layer_backward_s);
}

}  // namespace spmd::training
