#pragma once
// The CUDA backend: pmap / shard_map programs whose collectives run on one GPU. Devices are
// threads (as in the reference backend); when every device has reached a collective, each group
// is planned as the simulator plans it (sim/collective_plan.h: algorithm, work dtype, JAX's
// conversions) and its schedule is carried out by the group's virtual devices on the GPU
// (schedule_on_gpu.h). Results therefore equal the reference folding in the algorithm's order
// (tools/sim_backend.h order_for_algorithm), bit for bit.

#include <limits>
#include <string>

#include "collectives/algorithm.h"
#include "reference/backend.h"
#include "reference/float_numerics.h"

namespace spmd::cuda {

class CudaBackend : public Backend {
 public:
  // Every collective uses `algorithm` where it can, else a ring (as the simulator does); rings and
  // trees follow each group's rank order. Element-wise steps and reductions compute with
  // `numerics` (XLA:CPU's flush subnormals, as JAX on CPU does). Runs on CUDA device `gpu`.
  explicit CudaBackend(collectives::Algorithm algorithm, FloatNumerics numerics = kIeeeNumerics,
                       int device_count = std::numeric_limits<int>::max(), int gpu = 0);

  std::string name() const override { return "cuda"; }
  int device_count() const override { return device_count_; }
  collectives::Algorithm algorithm() const { return algorithm_; }

  std::vector<Values> run(const Mesh& mesh, const std::vector<Values>& inputs,
                          const DeviceFunction& function, bool check_vma) override;

 private:
  collectives::Algorithm algorithm_;
  FloatNumerics numerics_;
  int device_count_;
  int gpu_;
};

// Registers `cuda` with the backend registry (`spmdsim conform --backend cuda`): an order of a
// simulator algorithm runs that algorithm (algorithm_for_order, backends/sim_backend.h) with the
// order's numerics.
void register_cuda_backend();

}  // namespace spmd::cuda
