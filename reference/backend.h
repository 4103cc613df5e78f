#pragma once
// spmd::Backend: how devices run and how collectives are carried out. The pmap / shard_map front
// end (pmap.h, shard_map.h) splits inputs and assembles outputs the same way for every backend;
// a backend only runs the per-device function on every device of a mesh. See docs/backends.md
// for how to plug in your own.

#include <string>
#include <vector>

#include "reference/context.h"
#include "reference/mesh.h"

namespace spmd {

// Marks the current thread as running a per-device function for as long as it lives. Backends
// put one around each device's function, so that pmap / shard_map called from inside a device
// function (nested pmap, which JAX no longer supports) is reported instead of run.
class DeviceScope {
 public:
  DeviceScope();
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  static bool active();
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;
  // How many devices the backend has; pmap over more is an error, as in JAX.
  virtual int device_count() const = 0;

  // Runs `function` once on every device of `mesh` (inputs[d] are device d's arguments) and
  // returns every device's results, indexed by device id. If devices fail, the error of the
  // lowest-numbered failing device is rethrown; devices that disagree about their collectives
  // (or wait in one that others never reach) raise spmd::DeadlockError naming each device and
  // the operation it waits in. Never hangs.
  virtual std::vector<Values> run(const Mesh& mesh, const std::vector<Values>& inputs,
                                  const DeviceFunction& function, bool check_vma) = 0;
};

}  // namespace spmd
