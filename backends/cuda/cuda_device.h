#pragma once
// Whether this machine can run the GPU backends: GPU tests skip with this reason, and the
// backends refuse to start with it.

#include <optional>
#include <string>

namespace spmd::cuda {

// Why no CUDA device can be used here, e.g. "no CUDA device: cudaGetDeviceCount returned
// cudaErrorNoDevice (no CUDA-capable device is detected)"; nothing when at least one is present.
std::optional<std::string> missing_cuda_device();

// The number of CUDA devices; spmd::Error with missing_cuda_device()'s reason when there is none.
int cuda_device_count();

// cudaSetDevice(gpu); spmd::Error "CUDA: cudaSetDevice(<gpu>): ..." when it fails.
void set_cuda_device(int gpu);

}  // namespace spmd::cuda
