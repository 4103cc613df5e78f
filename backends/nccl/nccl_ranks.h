#pragma once
// NCCL's collectives over a set of GPUs of this machine, one rank per GPU, all communicators in
// this process (ncclCommInitAll) and every rank's call in one ncclGroupStart/End. Buffers are
// flat arrays, rank r's on the r-th listed GPU. NCCL 2.28 refuses two ranks on one GPU
// ("Duplicate GPU detected"); several ranks per GPU need NCCL >= 2.30 and
// NCCL_MULTI_RANK_GPU_ENABLE=1 (docs/reduction-orders.md#several-ranks-on-one-gpu).

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "reference/array.h"
#include "reference/fold_reduce.h"

namespace spmd::nccl {

// "2.28.9", from ncclGetVersion (the library loaded, not the header).
std::string nccl_version();

class NcclRanks {
 public:
  // Communicators for GPUs 0..ranks-1; spmd::Error naming NCCL's error when it fails.
  explicit NcclRanks(int ranks);
  // Communicators for the listed GPUs: rank r on gpus[r].
  explicit NcclRanks(const std::vector<int>& gpus);
  ~NcclRanks();
  NcclRanks(const NcclRanks&) = delete;
  NcclRanks& operator=(const NcclRanks&) = delete;

  int ranks() const;
  // Each takes one array per rank (one dtype and shape) and returns every rank's result.
  // ncclAllReduce(ncclSum): not bool (JAX sums bool as int32).
  std::vector<Array> all_reduce_sum(const std::vector<Array>& inputs);
  // ncclAllReduce with ncclSum / ncclMax / ncclMin; bool max / min as uint8 (OR / AND).
  std::vector<Array> all_reduce(const std::vector<Array>& inputs, ReduceOp op);
  // ncclAllGather: every rank gets all inputs concatenated in rank order.
  std::vector<Array> all_gather(const std::vector<Array>& inputs);
  // ncclReduceScatter: rank r gets block r of the reduction (inputs of ranks() equal blocks).
  std::vector<Array> reduce_scatter(const std::vector<Array>& inputs, ReduceOp op);
  // ncclSend / ncclRecv: rank r gets block r of every rank's input, in rank order.
  std::vector<Array> all_to_all(const std::vector<Array>& inputs);
  // ncclSend / ncclRecv: for each (source, destination) pair the destination gets the source's
  // input; ranks that are no destination get zeros, as in jax.lax.ppermute.
  std::vector<Array> permute(const std::vector<Array>& inputs,
                             const std::vector<std::pair<int, int>>& pairs);

 private:
  struct State;
  struct Buffers;
  Buffers upload(const std::vector<Array>& inputs, std::int64_t result_elements,
                 const char* what);
  std::vector<Array> download(Buffers& buffers, const Shape& result_shape, const char* what);
  std::unique_ptr<State> state_;
};

}  // namespace spmd::nccl
