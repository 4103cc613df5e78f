#pragma once
// CUDA runtime errors as spmd::Error: "CUDA: <what>: cudaErrorX (description)".

#include <string>
#include <string_view>

#include <cuda_runtime.h>

#include "reference/error.h"

namespace spmd::cuda {

// "cudaErrorNoDevice (no CUDA-capable device is detected)".
inline std::string cuda_error_text(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
}

inline void check_cuda(cudaError_t status, std::string_view what) {
  if (status != cudaSuccess) {
    throw Error("CUDA: " + std::string(what) + ": " + cuda_error_text(status));
  }
}

}  // namespace spmd::cuda
