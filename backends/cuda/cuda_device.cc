#include "backends/cuda/cuda_device.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "backends/cuda/cuda_check.h"

namespace spmd::cuda {

std::optional<std::string> missing_cuda_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    return "no CUDA device: cudaGetDeviceCount returned " + cuda_error_text(status);
  }
  if (count == 0) return std::string("no CUDA device: cudaGetDeviceCount found 0 devices");
  return std::nullopt;
}

int cuda_device_count() {
  if (auto reason = missing_cuda_device()) throw Error(*reason);
  int count = 0;
  check_cuda(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  return count;
}

void set_cuda_device(int gpu) {
  check_cuda(cudaSetDevice(gpu), fmt::format("cudaSetDevice({})", gpu));
}

}  // namespace spmd::cuda
