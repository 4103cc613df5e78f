#pragma once
// How much memory this process may use: the host's physical memory, or less where the address
// space is limited (ulimit -v). For commands that would otherwise find out by running out.

#include <cstdint>
#include <optional>

namespace spmd {

// The host's physical memory (INT64_MAX where the host does not say).
std::int64_t host_physical_memory_bytes();
// The process's address-space limit (RLIMIT_AS, ulimit -v), where one is set.
std::optional<std::int64_t> address_space_limit_bytes();
// The smaller of the two.
std::int64_t host_memory_bytes();

}  // namespace spmd
