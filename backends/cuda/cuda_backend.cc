#include "backends/cuda/cuda_backend.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "backends/backend_registry.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/schedule_on_gpu.h"
#include "backends/sim_backend.h"
#include "reference/collective_groups.h"
#include "reference/device_threads.h"
#include "sim/collective_plan.h"

namespace spmd::cuda {
namespace {

// The simulator's choice with rings by rank: no topology, so nothing else steers the algorithm.
sim::AlgorithmChoice choice_of(collectives::Algorithm algorithm) {
  sim::AlgorithmChoice choice;
  choice.ring_by_rank = true;
  choice.forced = algorithm;
  return choice;
}

// Every device's result (by device id): each group planned, then run on the GPU.
std::vector<Array> evaluate_on_gpu(const CollectiveCall& call, const Mesh& mesh,
                                   const std::vector<Array>& inputs,
                                   const sim::AlgorithmChoice& choice,
                                   const FloatNumerics& numerics) {
  std::vector<Array> results(inputs.size());
  const int axis_size = collective_axis_size(mesh, call);
  for (const std::vector<int>& members : collective_groups(mesh, call)) {
    std::vector<Array> group_inputs;
    for (int member : members) group_inputs.push_back(inputs[static_cast<std::size_t>(member)]);
    const Array& first = group_inputs.front();
    // No topology: the group's devices are its mesh devices and form no grid.
    const sim::CollectivePlan plan = sim::plan_collective(
        call, first.dtype(), first.shape(), sim::PlacedGroup{members, {}}, axis_size, choice);
    const collectives::Schedule schedule = collectives::build_schedule(plan.algorithm, plan.shape);
    std::vector<Array> group =
        sim::group_results(call, plan, schedule, group_inputs, numerics, run_schedule_on_gpu);
    for (std::size_t r = 0; r < members.size(); ++r) {
      results[static_cast<std::size_t>(members[r])] = std::move(group[r]);
    }
  }
  return results;
}

}  // namespace

CudaBackend::CudaBackend(collectives::Algorithm algorithm, FloatNumerics numerics,
                         int device_count, int gpu)
    : algorithm_(algorithm), numerics_(numerics), device_count_(device_count), gpu_(gpu) {
  if (device_count < 1) {
    throw Error(fmt::format("CudaBackend: device_count {}, expected at least 1", device_count));
  }
}

std::vector<Values> CudaBackend::run(const Mesh& mesh, const std::vector<Values>& inputs,
                                     const DeviceFunction& function, bool check_vma) {
  const sim::AlgorithmChoice choice = choice_of(algorithm_);
  const int gpu = gpu_;
  const FloatNumerics numerics = numerics_;
  Rendezvous rendezvous(mesh, [&mesh, &choice, gpu, numerics](
                                  const CollectiveCall& call,
                                  const std::vector<Array>& collective_inputs) {
    set_cuda_device(gpu);
    return evaluate_on_gpu(call, mesh, collective_inputs, choice, numerics);
  });
  return run_devices_on_threads("CudaBackend", mesh, inputs, function, check_vma, rendezvous,
                                numerics_);
}

void register_cuda_backend() {
  register_backend("cuda", [](const ReductionOrder& order, int device_count) {
    if (!order.ring.empty()) {
      throw Error("--ring with --backend cuda: its rings follow group rank order, expected no --ring");
    }
    cuda_device_count();  // spmd::Error naming why no GPU can be used
    return std::make_unique<CudaBackend>(algorithm_for_order(order), order.numerics(),
                                         device_count);
  });
}

}  // namespace spmd::cuda
