#include "reference/reference_backend.h"

#include "reference/device_threads.h"
#include "reference/rendezvous.h"

namespace spmd {

std::vector<Values> ReferenceBackend::run(const Mesh& mesh, const std::vector<Values>& inputs,
                                          const DeviceFunction& function, bool check_vma) {
  Rendezvous rendezvous(mesh, order_);
  return run_devices_on_threads("ReferenceBackend", mesh, inputs, function, check_vma, rendezvous,
                                order_.numerics());
}

}  // namespace spmd
