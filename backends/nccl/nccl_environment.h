#pragma once
// The environment that pins NCCL to one reduction order
// (docs/reduction-orders.md#pinning-one-order): the Ring algorithm, the Simple protocol (2 MiB
// chunks from the default 4 MiB buffer), one channel, no NVLink-SHARP or CollNet in-network
// reduction; plus the INFO log that names the ring. NCCL reads these once, at its first
// initialization, so they must be set before the process makes any NCCL call.

#include <string>
#include <utility>
#include <vector>

namespace spmd::nccl {

// The variables and values, in the order they are set.
std::vector<std::pair<std::string, std::string>> pinned_ring_environment(
    const std::string& debug_file);

// Sets every variable of pinned_ring_environment (replacing values already set).
void pin_ring_environment(const std::string& debug_file);

}  // namespace spmd::nccl
