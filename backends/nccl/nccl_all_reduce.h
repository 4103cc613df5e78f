#pragma once
// A sum all-reduce by NCCL over the first `ranks` GPUs of this machine, one rank per GPU, all
// communicators in this process (ncclCommInitAll) and the calls in one ncclGroupStart/End.
// NCCL 2.28 refuses two ranks on one GPU ("Duplicate GPU detected"); several ranks per GPU need
// NCCL >= 2.30 and NCCL_MULTI_RANK_GPU_ENABLE=1
// (docs/reduction-orders.md#several-ranks-on-one-gpu).

#include <memory>
#include <string>
#include <vector>

#include "reference/array.h"

namespace spmd::nccl {

// "2.28.9", from ncclGetVersion (the library loaded, not the header).
std::string nccl_version();

class NcclRanks {
 public:
  // Communicators for GPUs 0..ranks-1; spmd::Error naming NCCL's error when it fails.
  explicit NcclRanks(int ranks);
  ~NcclRanks();
  NcclRanks(const NcclRanks&) = delete;
  NcclRanks& operator=(const NcclRanks&) = delete;

  int ranks() const;
  // ncclAllReduce(ncclSum) of `inputs` (rank r's on GPU r; one dtype and shape, not bool): every
  // rank's result.
  std::vector<Array> all_reduce_sum(const std::vector<Array>& inputs);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace spmd::nccl
