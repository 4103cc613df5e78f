#include "cli/run_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <variant>

#include "cli/host_memory.h"
#include "reference/error.h"
#include "sim/fiber_stack_size.h"
#include "support/checked_math.h"
#include "support/units.h"

namespace spmd {
namespace {

// Each device's state in the simulator beside its stack and data: its clocks, queues, memory
// ledger, cost log rows, its mesh and collective bookkeeping, its links in a sparse topology, and
// the pages of its stack that a run touches. Peak RSS of `perf -b 8 -e 8` on this 2-core host
// (2026-11-28): 14 KiB per device without data, 30 KiB with, on a switch of 40,000 devices
// (docs/simulator.md: 1.69 GiB for 131,072 devices without data); rounded up, so that the
// estimate errs on the side of refusing.
constexpr std::int64_t kStateBytesCostOnly = 16 * 1024;
constexpr std::int64_t kStateBytesWithData = 32 * 1024;
// What grows with the square of the device count: a fully connected topology's links (about 105
// B per pair at 2,000 and 4,000 devices), and a flat ring's all-reduce (about 1.3 B per pair at
// 10,000 to 40,000 devices: 2.6 GiB at 40,000). Other kinds grow with the devices.
std::int64_t pair_bytes(const topology::TopologySpec& topology) {
  if (std::holds_alternative<topology::FullyConnectedSpec>(topology)) return 128;
  if (std::holds_alternative<topology::RingSpec>(topology)) return 2;
  return 0;
}

}  // namespace

RunMemory simulated_run_memory(const sim::MachineSpec& spec, std::int64_t data_bytes_per_device,
                               std::size_t configured_stack_bytes) {
  RunMemory need;
  const int devices = spec.devices;
  need.devices = devices;
  need.stack_bytes = sim::fiber_stack_bytes(configured_stack_bytes, devices);
  need.state_bytes = data_bytes_per_device > 0 ? kStateBytesWithData : kStateBytesCostOnly;
  need.pair_bytes = pair_bytes(spec.topology);
  need.data_bytes = std::max<std::int64_t>(0, data_bytes_per_device);
  // Per device: its state, its data, and its share of the pairs (pair_bytes x devices).
  const std::int64_t resident_per_device =
      saturating_add(saturating_add(need.state_bytes, need.data_bytes),
                     saturating_multiply(need.pair_bytes, devices));
  need.resident_bytes = saturating_multiply(resident_per_device, devices);
  need.address_space_bytes = saturating_multiply(
      saturating_add(resident_per_device, static_cast<std::int64_t>(need.stack_bytes)), devices);
  return need;
}

void check_run_fits_host(const RunMemory& need, const std::string& what,
                         const std::string& remedy) {
  const std::int64_t physical_bytes = host_physical_memory_bytes();
  const std::optional<std::int64_t> address_space = address_space_limit_bytes();
  const bool too_resident = need.resident_bytes > physical_bytes;
  const bool too_mapped = address_space && need.address_space_bytes > *address_space;
  if (!too_resident && !too_mapped) return;
  // The bound that fails: the host's memory for what the run touches, else the address space.
  const std::int64_t needed = too_resident ? need.resident_bytes : need.address_space_bytes;
  const std::int64_t limit = too_resident ? physical_bytes : *address_space;
  const std::string limit_text =
      too_resident ? fmt::format("the {} of memory this host has", format_bytes(limit))
                   : fmt::format("the {} of address space this process may map (ulimit -v)",
                                 format_bytes(limit));
  // Each device's fixed part, and the most devices n with n x (fixed + pair_bytes x n) <= limit.
  const double fixed = static_cast<double>(need.state_bytes) +
                       static_cast<double>(need.data_bytes) +
                       (too_resident ? 0.0 : static_cast<double>(need.stack_bytes));
  const double pair = static_cast<double>(need.pair_bytes);
  const double lim = static_cast<double>(limit);
  const double most = pair > 0 ? (std::sqrt(fixed * fixed + 4 * pair * lim) - fixed) / (2 * pair)
                               : lim / fixed;
  std::string parts =
      too_resident ? ""
                   : fmt::format("a fiber stack of {}, ",
                                 format_bytes(static_cast<std::int64_t>(need.stack_bytes)));
  parts += fmt::format("about {} of simulator state", format_bytes(need.state_bytes));
  if (need.data_bytes > 0) parts += fmt::format(", {} of data", format_bytes(need.data_bytes));
  if (need.pair_bytes > 0) {
    parts += fmt::format(", {} B per pair of devices for the topology's links and schedules",
                         need.pair_bytes);
  }
  throw Error(fmt::format(
      "{}: {} simulated devices need about {} of host memory (per device: {}), more than {}; "
      "expected at most about {} devices here{}",
      what, need.devices, format_bytes(needed), parts, limit_text,
      static_cast<std::int64_t>(std::floor(most)), remedy.empty() ? "" : ", " + remedy));
}

}  // namespace spmd
