#pragma once
// How transfers that cross the same link at the same time share it (docs/link-sharing.md):
//   fair: max-min fair bandwidth sharing between flows, recomputed whenever a flow starts or ends
//         (cost_model/fair_share.h); the default.
//   fifo: one queue per directed link, served in request order; a message holds its whole route
//         for its serialization time (cost_model/contention.h).
// Either way a transfer alone on its route takes latency + ceil(bytes * 1e12 / bandwidth).

#include <string>
#include <string_view>

namespace spmd::sim {

enum class LinkSharing { fair, fifo };

std::string_view link_sharing_name(LinkSharing sharing);
// spmd::Error "link sharing 'x' is unknown, expected fair or fifo" for other names.
LinkSharing link_sharing_from_name(std::string_view name);

}  // namespace spmd::sim
