#include "backends/nccl/nccl_backend.h"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "backends/backend_registry.h"
#include "backends/cuda/cuda_device.h"
#include "backends/library_backend.h"
#include "backends/nccl/nccl_environment.h"
#include "backends/nccl/nccl_ranks.h"
#include "reference/error.h"

namespace spmd {
namespace {

using nccl::NcclRanks;

// NCCL's five operations on communicators made once per group (the group's devices are its
// GPUs, in rank order) and kept for the backend's life.
class NcclGroupCollectives : public GroupCollectives {
 public:
  std::vector<Array> all_reduce(const GroupBuffers& group, ReduceOp op) override {
    return ranks_for(group).all_reduce(group.inputs, op);
  }
  std::vector<Array> all_gather(const GroupBuffers& group) override {
    return ranks_for(group).all_gather(group.inputs);
  }
  std::vector<Array> reduce_scatter(const GroupBuffers& group, ReduceOp op) override {
    return ranks_for(group).reduce_scatter(group.inputs, op);
  }
  std::vector<Array> all_to_all(const GroupBuffers& group) override {
    return ranks_for(group).all_to_all(group.inputs);
  }
  std::vector<Array> permute(const GroupBuffers& group,
                             const std::vector<std::pair<int, int>>& pairs) override {
    return ranks_for(group).permute(group.inputs, pairs);
  }

 private:
  NcclRanks& ranks_for(const GroupBuffers& group) {
    auto& ranks = communicators_[group.devices];
    if (!ranks) ranks = std::make_unique<NcclRanks>(group.devices);
    return *ranks;
  }

  std::map<std::vector<int>, std::unique_ptr<NcclRanks>> communicators_;
};

// NCCL reads its environment once, at its first call: pin it before any.
void pin_nccl_once() {
  static std::once_flag pinned;
  std::call_once(pinned, [] {
    nccl::pin_ring_environment("/tmp/spmdsim_nccl.%p.log");  // NCCL puts the pid for %p
  });
}

}  // namespace

std::unique_ptr<Backend> make_nccl_backend(const ReductionOrder& order, int device_count) {
  if (order.algorithm != ReductionAlgorithm::nccl_ring) {
    throw Error(fmt::format("--order {} with --backend nccl, expected nccl_ring (NCCL is pinned "
                            "to its ring)",
                            reduction_algorithm_name(order.algorithm)));
  }
  const int gpus = cuda::cuda_device_count();
  if (device_count > gpus) {
    throw Error(fmt::format(
        "--backend nccl runs one rank per GPU: the case needs {} devices, this machine has {} "
        "GPUs; expected a case with at most {} devices",
        device_count, gpus, gpus));
  }
  pin_nccl_once();
  return std::make_unique<LibraryBackend>("nccl", device_count,
                                          std::make_shared<NcclGroupCollectives>(),
                                          order.numerics());
}

void register_nccl_backend() {
  register_backend("nccl", make_nccl_backend,
                   ReductionOrder{.algorithm = ReductionAlgorithm::nccl_ring});
}

}  // namespace spmd
