#include "backends/nccl/nccl_ranks.h"

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

ncclDataType_t nccl_type(DType dtype, ReduceOp op) {
  switch (dtype) {
    case DType::float64: return ncclFloat64;
    case DType::float32: return ncclFloat32;
    case DType::float16: return ncclFloat16;
    case DType::bfloat16: return ncclBfloat16;
    case DType::int64: return ncclInt64;
    case DType::int32: return ncclInt32;
    case DType::int8: return ncclInt8;
    case DType::uint8: return ncclUint8;
    case DType::bool_:
      if (op != ReduceOp::sum) return ncclUint8;  // max / min of 0 and 1: OR / AND
      break;
  }
  throw Error("NCCL sum of bool, expected a numeric dtype (JAX sums bool as int32)");
}

// Element types for data movement: a byte per byte of element.
ncclDataType_t nccl_bytes() { return ncclUint8; }

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::min: return ncclMin;
  }
  throw Error("NCCL: unknown reduce op");
}

}  // namespace

std::string nccl_version() {
  int code = 0;
  check_nccl(ncclGetVersion(&code), "ncclGetVersion");
  // NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9.
  return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
}

struct NcclRanks::State {
  std::vector<int> gpus;
  std::vector<ncclComm_t> comms;
  std::vector<std::unique_ptr<cuda::Stream>> streams;  // one per GPU, created on that GPU
};

// Rank r's send buffer (its input, uploaded) and receive buffer (zeroed), on its GPU.
struct NcclRanks::Buffers {
  std::vector<cuda::DeviceBuffer> send;
  std::vector<cuda::DeviceBuffer> receive;
  DType dtype = DType::float32;
};

namespace {

std::vector<int> first_gpus(int ranks) {
  if (ranks < 1) throw Error(fmt::format("NcclRanks: ranks {}, expected at least 1", ranks));
  std::vector<int> gpus;
  for (int g = 0; g < ranks; ++g) gpus.push_back(g);
  return gpus;
}

}  // namespace

NcclRanks::NcclRanks(int ranks) : NcclRanks(first_gpus(ranks)) {}

NcclRanks::NcclRanks(const std::vector<int>& gpus) : state_(std::make_unique<State>()) {
  if (gpus.empty()) throw Error("NcclRanks: no GPUs, expected at least 1");
  const int ranks = static_cast<int>(gpus.size());
  state_->gpus = gpus;
  state_->comms.resize(gpus.size());
  check_nccl(ncclCommInitAll(state_->comms.data(), ranks, gpus.data()),
             fmt::format("ncclCommInitAll over {} GPUs", ranks));
  for (int gpu : gpus) {
    cuda::set_cuda_device(gpu);
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

NcclRanks::Buffers NcclRanks::upload(const std::vector<Array>& inputs,
                                     std::int64_t result_elements, const char* what) {
  const int n = ranks();
  if (static_cast<int>(inputs.size()) != n) {
    throw Error(fmt::format("NCCL {}: {} inputs, expected {} (one per GPU)", what, inputs.size(), n));
  }
  Buffers buffers{.send = {}, .receive = {}, .dtype = inputs[0].dtype()};
  const std::size_t result_bytes =
      static_cast<std::size_t>(result_elements) * dtype_size_bytes(buffers.dtype);
  for (int r = 0; r < n; ++r) {
    const Array& x = inputs[static_cast<std::size_t>(r)];
    if (x.dtype() != inputs[0].dtype() || x.shape() != inputs[0].shape()) {
      throw Error(fmt::format("NCCL {}: input {} is {}, expected {}", what, r, x.type_string(),
                              inputs[0].type_string()));
    }
    const int gpu = state_->gpus[static_cast<std::size_t>(r)];
    cuda::set_cuda_device(gpu);
    buffers.send.emplace_back(x.size_bytes(), fmt::format("GPU {} send buffer", gpu));
    buffers.receive.emplace_back(result_bytes, fmt::format("GPU {} receive buffer", gpu));
    if (x.size_bytes() > 0) {
      cuda::check_cuda(
          cudaMemcpy(buffers.send.back().data(), x.bytes().data(), x.size_bytes(),
                     cudaMemcpyHostToDevice),
          fmt::format("upload to GPU {}", gpu));
    }
    if (result_bytes > 0) {
      cuda::check_cuda(cudaMemset(buffers.receive.back().data(), 0, result_bytes),
                       fmt::format("zero the receive buffer on GPU {}", gpu));
    }
  }
  return buffers;
}

std::vector<Array> NcclRanks::download(Buffers& buffers, const Shape& result_shape,
                                       const char* what) {
  std::vector<Array> results;
  for (int r = 0; r < ranks(); ++r) {
    const auto i = static_cast<std::size_t>(r);
    cuda::set_cuda_device(state_->gpus[i]);
    cuda::check_cuda(cudaStreamSynchronize(state_->streams[i]->get()),
                     fmt::format("NCCL {} on GPU {}", what, state_->gpus[i]));
    Array result(buffers.dtype, result_shape);
    if (result.size_bytes() > 0) {
      cuda::check_cuda(cudaMemcpy(result.mutable_bytes().data(), buffers.receive[i].data(),
                                  result.size_bytes(), cudaMemcpyDeviceToHost),
                       fmt::format("download from GPU {}", state_->gpus[i]));
    }
    results.push_back(std::move(result));
  }
  return results;
}

std::vector<Array> NcclRanks::all_reduce_sum(const std::vector<Array>& inputs) {
  return all_reduce(inputs, ReduceOp::sum);
}

std::vector<Array> NcclRanks::all_reduce(const std::vector<Array>& inputs, ReduceOp op) {
  const std::int64_t count = inputs.empty() ? 0 : inputs[0].size();
  Buffers buffers = upload(inputs, count, "all_reduce");
  const ncclDataType_t type = nccl_type(buffers.dtype, op);
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (std::size_t i = 0; i < buffers.send.size(); ++i) {
    check_nccl(ncclAllReduce(buffers.send[i].data(), buffers.receive[i].data(),
                             static_cast<std::size_t>(count), type, nccl_op(op), state_->comms[i],
                             state_->streams[i]->get()),
               fmt::format("ncclAllReduce on GPU {}", state_->gpus[i]));
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  return download(buffers, inputs[0].shape(), "all_reduce");
}

std::vector<Array> NcclRanks::all_gather(const std::vector<Array>& inputs) {
  const std::int64_t count = inputs.empty() ? 0 : inputs[0].size();
  Buffers buffers = upload(inputs, count * ranks(), "all_gather");
  const std::size_t bytes = inputs[0].size_bytes();
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (std::size_t i = 0; i < buffers.send.size(); ++i) {
    check_nccl(ncclAllGather(buffers.send[i].data(), buffers.receive[i].data(), bytes,
                             nccl_bytes(), state_->comms[i], state_->streams[i]->get()),
               fmt::format("ncclAllGather on GPU {}", state_->gpus[i]));
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  return download(buffers, {count * ranks()}, "all_gather");
}

std::vector<Array> NcclRanks::reduce_scatter(const std::vector<Array>& inputs, ReduceOp op) {
  const std::int64_t block = inputs.empty() ? 0 : inputs[0].size() / ranks();
  Buffers buffers = upload(inputs, block, "reduce_scatter");
  const ncclDataType_t type = nccl_type(buffers.dtype, op);
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (std::size_t i = 0; i < buffers.send.size(); ++i) {
    check_nccl(ncclReduceScatter(buffers.send[i].data(), buffers.receive[i].data(),
                                 static_cast<std::size_t>(block), type, nccl_op(op),
                                 state_->comms[i], state_->streams[i]->get()),
               fmt::format("ncclReduceScatter on GPU {}", state_->gpus[i]));
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  return download(buffers, {block}, "reduce_scatter");
}

std::vector<Array> NcclRanks::all_to_all(const std::vector<Array>& inputs) {
  const int n = ranks();
  const std::int64_t count = inputs.empty() ? 0 : inputs[0].size();
  Buffers buffers = upload(inputs, count, "all_to_all");
  const std::size_t block_bytes = inputs[0].size_bytes() / static_cast<std::size_t>(n);
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (int r = 0; r < n; ++r) {
    const auto i = static_cast<std::size_t>(r);
    for (int peer = 0; peer < n; ++peer) {
      const std::size_t offset = static_cast<std::size_t>(peer) * block_bytes;
      check_nccl(ncclSend(buffers.send[i].data() + offset, block_bytes, nccl_bytes(), peer,
                          state_->comms[i], state_->streams[i]->get()),
                 "ncclSend");
      check_nccl(ncclRecv(buffers.receive[i].data() + offset, block_bytes, nccl_bytes(), peer,
                          state_->comms[i], state_->streams[i]->get()),
                 "ncclRecv");
    }
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  return download(buffers, {count}, "all_to_all");
}

std::vector<Array> NcclRanks::permute(const std::vector<Array>& inputs,
                                      const std::vector<std::pair<int, int>>& pairs) {
  const std::int64_t count = inputs.empty() ? 0 : inputs[0].size();
  Buffers buffers = upload(inputs, count, "permute");
  const std::size_t bytes = inputs[0].size_bytes();
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (auto [source, destination] : pairs) {
    const auto s = static_cast<std::size_t>(source);
    const auto d = static_cast<std::size_t>(destination);
    check_nccl(ncclSend(buffers.send[s].data(), bytes, nccl_bytes(), destination,
                        state_->comms[s], state_->streams[s]->get()),
               "ncclSend");
    check_nccl(ncclRecv(buffers.receive[d].data(), bytes, nccl_bytes(), source, state_->comms[d],
                        state_->streams[d]->get()),
               "ncclRecv");
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  return download(buffers, {count}, "permute");
}

}  // namespace spmd::nccl
