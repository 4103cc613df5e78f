#include "sim/link_sharing.h"

#include <fmt/format.h>

#include "reference/error.h"

namespace spmd::sim {

std::string_view link_sharing_name(LinkSharing sharing) {
  return sharing == LinkSharing::fair ? "fair" : "fifo";
}

LinkSharing link_sharing_from_name(std::string_view name) {
  if (name == "fair") return LinkSharing::fair;
  if (name == "fifo") return LinkSharing::fifo;
  throw Error(fmt::format("link sharing '{}' is unknown, expected fair or fifo", name));
}

}  // namespace spmd::sim
