#pragma once
// spmd::ProcessLayout: which process (host) owns which devices of a mesh, as jax.distributed sets
// it up (one process per host, each with its local devices). jax.process_index() is a process's
// position in the layout, jax.process_count() its size, jax.local_devices() a process's devices.
// Device ids are the mesh's (row-major over its shape); every device of the mesh belongs to
// exactly one process, and every process has at least one device.

#include <string>
#include <vector>

#include "reference/mesh.h"

namespace spmd {

class ProcessLayout {
 public:
  // local_devices[p]: the mesh device ids process p owns. spmd::Error, naming
  // `field`[p].devices, the value and what was expected, for a process without devices, a device
  // outside the mesh or in two processes, or a mesh device in none.
  ProcessLayout(std::vector<std::vector<int>> local_devices, int device_count,
                const std::string& field = "processes");
  // One process owning the whole mesh (plain single-process JAX).
  static ProcessLayout single_process(int device_count);
  // `process_count` processes of equal size, each owning a run of consecutive device ids
  // (jax.devices() on N hosts of K devices each, reshaped into the mesh in id order).
  static ProcessLayout contiguous(int process_count, int device_count);

  int process_count() const { return static_cast<int>(local_devices_.size()); }
  int device_count() const { return static_cast<int>(process_of_.size()); }
  // The process that owns `device` (jax Device.process_index).
  int process_index(int device) const { return process_of_.at(static_cast<std::size_t>(device)); }
  // Process p's devices, in ascending id order (jax.local_devices() on process p).
  const std::vector<int>& local_devices(int process) const {
    return local_devices_.at(static_cast<std::size_t>(process));
  }

  // "[[0, 1], [2, 3]]", for messages.
  std::string to_string() const;

  friend bool operator==(const ProcessLayout&, const ProcessLayout&) = default;

 private:
  std::vector<std::vector<int>> local_devices_;
  std::vector<int> process_of_;  // by device id
};

// The smallest block of `mesh` holding every device of `process`: the process's local mesh
// (jax Mesh.local_mesh), as the start and size along each mesh axis. spmd::Error with JAX's
// message where that block also holds other processes' devices (host_local_array_to_global_array
// needs each host's devices to form a contiguous subcube of the mesh).
struct LocalMesh {
  std::vector<int> start;  // per mesh axis
  Mesh mesh;               // the subcube, with the global mesh's axis names
  // The global mesh device at local device id `local` (row-major over the subcube).
  int global_device(const Mesh& global, int local) const;
};
LocalMesh local_mesh(const Mesh& mesh, const ProcessLayout& layout, int process);

}  // namespace spmd
