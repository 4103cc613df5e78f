// A psum over 8 simulated devices on a ring, checked bit for bit against the reference folding in
// the ring's order; prints the sum and the simulated time.
#include <cstdio>

#include "collectives/algorithm.h"
#include "reference/reference_backend.h"
#include "sim/machine.h"
#include "sim/machine_presets.h"

int main() {
  using namespace spmd;
  sim::Machine machine(machine_from_name_or_file("dgx-h100"),
                       {.algorithm = collectives::Algorithm::ring, .ring_by_rank = true});
  ReferenceBackend reference(ReductionOrder{.algorithm = ReductionAlgorithm::nccl_ring},
                             machine.device_count());
  const Mesh mesh({machine.device_count()}, {"i"});
  std::vector<Values> inputs;
  for (int d = 0; d < mesh.device_count(); ++d) {
    inputs.push_back({Array::scalar<float>(0.1f * static_cast<float>(d + 1))});
  }
  const DeviceFunction psum = [](Context& ctx, const Values& xs) {
    return Values{ctx.psum(xs[0], AxisNames("i"))};
  };
  const std::vector<Values> simulated = machine.run(mesh, inputs, psum, /*check_vma=*/false);
  const std::vector<Values> expected = reference.run(mesh, inputs, psum, /*check_vma=*/false);
  for (int d = 0; d < mesh.device_count(); ++d) {
    if (!simulated[d][0].bitwise_equal(expected[d][0])) {
      std::printf("device %d differs from the reference\n", d);
      return 1;
    }
  }
  const sim::CollectiveRecord& record = machine.cost_log().collectives.at(0);
  std::printf("psum = %.9g on every device, %lld ps on %s\n",
              static_cast<double>(simulated[0][0].values<float>()[0]),
              static_cast<long long>(record.end_ps - record.start_ps), record.algorithm.c_str());
  return 0;
}
