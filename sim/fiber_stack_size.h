#pragma once
// The size of each device fiber's stack: SimOptions::fiber_stack_bytes when set, else 256 KiB,
// or 64 KiB above 4096 devices (where the stacks are most of a run's address space). One place,
// for the run that makes the stacks and for the CLI's estimate of a run's host memory.

#include <cstddef>

namespace spmd::sim {

constexpr std::size_t fiber_stack_bytes(std::size_t configured_bytes, int devices) {
  if (configured_bytes != 0) return configured_bytes;
  return devices > 4096 ? 64 * 1024 : 256 * 1024;
}

}  // namespace spmd::sim
