#pragma once
// Runs a per-device function on every device of a mesh, one thread per device, with collectives
// meeting at a Rendezvous: the Backend::run of the reference backend and of any backend that
// computes each collective in one place from every device's input (backends/cuda).

#include <string>
#include <vector>

#include "reference/backend.h"
#include "reference/rendezvous.h"

namespace spmd {

// Backend::run's contract (reference/backend.h): outputs by device id; the error of the
// lowest-numbered device that failed on its own, else a DeadlockError. `backend` names the
// caller in the error for a wrong number of input lists. Each device's Context has `numerics`.
std::vector<Values> run_devices_on_threads(const std::string& backend, const Mesh& mesh,
                                           const std::vector<Values>& inputs,
                                           const DeviceFunction& function, bool check_vma,
                                           Rendezvous& rendezvous, const FloatNumerics& numerics);

}  // namespace spmd
