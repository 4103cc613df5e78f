#pragma once
// How much memory this process may use: the host's physical memory, or less where the address
// space is limited (ulimit -v). For commands that would otherwise find out by running out.

#include <cstdint>

namespace spmd {

std::int64_t host_memory_bytes();

}  // namespace spmd
