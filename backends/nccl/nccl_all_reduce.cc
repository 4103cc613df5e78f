#include "backends/nccl/nccl_all_reduce.h"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/device_memory.h"
#include "reference/error.h"

namespace spmd::nccl {
namespace {

void check_nccl(ncclResult_t status, const std::string& what) {
  if (status != ncclSuccess) {
    throw Error("NCCL: " + what + ": " + ncclGetErrorString(status) + " (" +
                ncclGetLastError(nullptr) + ")");
  }
}

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::float64: return ncclFloat64;
    case DType::float32: return ncclFloat32;
    case DType::float16: return ncclFloat16;
    case DType::bfloat16: return ncclBfloat16;
    case DType::int64: return ncclInt64;
    case DType::int32: return ncclInt32;
    case DType::int8: return ncclInt8;
    case DType::uint8: return ncclUint8;
    case DType::bool_: break;
  }
  throw Error("NCCL all_reduce_sum: dtype bool, expected a numeric dtype (convert bool to int32)");
}

}  // namespace

std::string nccl_version() {
  int code = 0;
  check_nccl(ncclGetVersion(&code), "ncclGetVersion");
  // NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9.
  return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
}

struct NcclRanks::State {
  std::vector<ncclComm_t> comms;
  std::vector<std::unique_ptr<cuda::Stream>> streams;  // one per GPU, created on that GPU
};

NcclRanks::NcclRanks(int ranks) : state_(std::make_unique<State>()) {
  if (ranks < 1) {
    throw Error(fmt::format("NcclRanks: ranks {}, expected at least 1", ranks));
  }
  std::vector<int> gpus;
  for (int g = 0; g < ranks; ++g) gpus.push_back(g);
  state_->comms.resize(static_cast<std::size_t>(ranks));
  check_nccl(ncclCommInitAll(state_->comms.data(), ranks, gpus.data()),
             fmt::format("ncclCommInitAll over {} GPUs", ranks));
  for (int g = 0; g < ranks; ++g) {
    cuda::set_cuda_device(g);
    state_->streams.push_back(std::make_unique<cuda::Stream>());
  }
}

NcclRanks::~NcclRanks() {
  state_->streams.clear();
  for (ncclComm_t comm : state_->comms) {
    if (comm != nullptr) (void)ncclCommDestroy(comm);
  }
}

int NcclRanks::ranks() const { return static_cast<int>(state_->comms.size()); }

std::vector<Array> NcclRanks::all_reduce_sum(const std::vector<Array>& inputs) {
  const int n = ranks();
  if (static_cast<int>(inputs.size()) != n) {
    throw Error(
        fmt::format("NCCL all_reduce_sum: {} inputs, expected {} (one per GPU)", inputs.size(), n));
  }
  const ncclDataType_t type = nccl_type(inputs[0].dtype());
  std::vector<cuda::DeviceBuffer> send, receive;
  for (int g = 0; g < n; ++g) {
    const Array& x = inputs[static_cast<std::size_t>(g)];
    if (x.dtype() != inputs[0].dtype() || x.shape() != inputs[0].shape()) {
      throw Error(fmt::format("NCCL all_reduce_sum: input {} is {}, expected {}", g,
                              x.type_string(), inputs[0].type_string()));
    }
    cuda::set_cuda_device(g);
    send.emplace_back(x.size_bytes(), fmt::format("GPU {} send buffer", g));
    receive.emplace_back(x.size_bytes(), fmt::format("GPU {} receive buffer", g));
    if (x.size_bytes() > 0) {
      cuda::check_cuda(
          cudaMemcpy(send.back().data(), x.bytes().data(), x.size_bytes(), cudaMemcpyHostToDevice),
          fmt::format("upload to GPU {}", g));
    }
  }
  const auto count = static_cast<std::size_t>(inputs[0].size());
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (int g = 0; g < n; ++g) {
    const auto i = static_cast<std::size_t>(g);
    check_nccl(ncclAllReduce(send[i].data(), receive[i].data(), count, type, ncclSum,
                             state_->comms[i], state_->streams[i]->get()),
               fmt::format("ncclAllReduce on GPU {}", g));
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  std::vector<Array> results;
  for (int g = 0; g < n; ++g) {
    const auto i = static_cast<std::size_t>(g);
    cuda::set_cuda_device(g);
    cuda::check_cuda(cudaStreamSynchronize(state_->streams[i]->get()),
                     fmt::format("ncclAllReduce on GPU {}", g));
    Array result(inputs[0].dtype(), inputs[0].shape());
    if (result.size_bytes() > 0) {
      cuda::check_cuda(cudaMemcpy(result.mutable_bytes().data(), receive[i].data(),
                                  result.size_bytes(), cudaMemcpyDeviceToHost),
                       fmt::format("download from GPU {}", g));
    }
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace spmd::nccl
