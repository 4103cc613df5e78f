#include "backends/cuda/device_memory.h"

#include <fmt/format.h>

#include <utility>

#include "backends/cuda/cuda_check.h"

namespace spmd::cuda {

DeviceBuffer::DeviceBuffer(std::size_t bytes, const std::string& what) : bytes_(bytes) {
  if (bytes == 0) return;  // nothing to hold; data() stays null and is never dereferenced
  void* pointer = nullptr;
  check_cuda(cudaMalloc(&pointer, bytes),
             fmt::format("cudaMalloc of {} bytes for {}", bytes, what));
  data_ = static_cast<std::byte*>(pointer);
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) (void)cudaFree(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) (void)cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

Stream::Stream() {
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}

Stream::~Stream() { (void)cudaStreamDestroy(stream_); }

Event::Event() {
  check_cuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate");
}

Event::~Event() { (void)cudaEventDestroy(event_); }

}  // namespace spmd::cuda
