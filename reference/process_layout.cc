#include "reference/process_layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "reference/error.h"

namespace spmd {

ProcessLayout::ProcessLayout(std::vector<std::vector<int>> local_devices, int device_count,
                             const std::string& field)
    : process_of_(static_cast<std::size_t>(device_count), -1) {
  if (local_devices.empty()) {
    throw Error(fmt::format("{}: [], expected at least one process with its devices", field));
  }
  for (std::size_t p = 0; p < local_devices.size(); ++p) {
    std::vector<int>& devices = local_devices[p];
    const std::string where = fmt::format("{}[{}].devices", field, p);
    if (devices.empty()) {
      throw Error(fmt::format("{}: [], expected at least one device: every process has local "
                              "devices",
                              where));
    }
    for (int device : devices) {
      if (device < 0 || device >= device_count) {
        throw Error(fmt::format("{}: device {}, expected a device id of the mesh, 0 to {}", where,
                                device, device_count - 1));
      }
      int& owner = process_of_[static_cast<std::size_t>(device)];
      if (owner != -1) {
        throw Error(fmt::format(
            "{}: device {} is also in {}[{}].devices, expected each device in one process", where,
            device, field, owner));
      }
      owner = static_cast<int>(p);
    }
    std::sort(devices.begin(), devices.end());
  }
  for (int device = 0; device < device_count; ++device) {
    if (process_of_[static_cast<std::size_t>(device)] == -1) {
      throw Error(fmt::format(
          "{}: mesh device {} is in no process, expected the processes' devices to cover the "
          "mesh's {} devices",
          field, device, device_count));
    }
  }
  local_devices_ = std::move(local_devices);
}

ProcessLayout ProcessLayout::single_process(int device_count) {
  return contiguous(1, device_count);
}

ProcessLayout ProcessLayout::contiguous(int process_count, int device_count) {
  if (process_count < 1 || device_count % process_count != 0) {
    throw Error(fmt::format("process count: {}, expected a positive divisor of the {} devices",
                            process_count, device_count));
  }
  const int per_process = device_count / process_count;
  std::vector<std::vector<int>> devices(static_cast<std::size_t>(process_count));
  for (int device = 0; device < device_count; ++device) {
    devices[static_cast<std::size_t>(device / per_process)].push_back(device);
  }
  return ProcessLayout(std::move(devices), device_count);
}

std::string ProcessLayout::to_string() const {
  std::vector<std::string> each;
  for (const auto& devices : local_devices_) each.push_back(fmt::format("[{}]", fmt::join(devices, ", ")));
  return fmt::format("[{}]", fmt::join(each, ", "));
}

int LocalMesh::global_device(const Mesh& global, int local) const {
  std::vector<int> coords = mesh.coordinates(local);
  for (std::size_t k = 0; k < coords.size(); ++k) coords[k] += start[k];
  return global.device_at(coords);
}

// As jax's _get_local_mesh: per axis the smallest range holding every local device; the block
// they span must hold nothing else.
LocalMesh local_mesh(const Mesh& mesh, const ProcessLayout& layout, int process) {
  const std::size_t axes = static_cast<std::size_t>(mesh.axis_count());
  std::vector<int> low(axes, -1), high(axes, -1);
  for (int device : layout.local_devices(process)) {
    const std::vector<int> coords = mesh.coordinates(device);
    for (std::size_t k = 0; k < axes; ++k) {
      if (low[k] == -1 || coords[k] < low[k]) low[k] = coords[k];
      high[k] = std::max(high[k], coords[k]);
    }
  }
  std::vector<int> sizes(axes);
  std::int64_t volume = 1;
  for (std::size_t k = 0; k < axes; ++k) {
    sizes[k] = high[k] - low[k] + 1;
    volume *= sizes[k];
  }
  if (volume != static_cast<std::int64_t>(layout.local_devices(process).size())) {
    throw Error(fmt::format(
        "process {}'s devices [{}]: ValueError: When passing host local inputs to pjit, devices "
        "connected to a single host must form a contiguous subcube of the global device mesh "
        "(mesh {})",
        process, fmt::join(layout.local_devices(process), ", "), mesh.to_string()));
  }
  return LocalMesh{low, Mesh(sizes, mesh.axis_names())};
}

}  // namespace spmd
