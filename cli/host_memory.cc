#include "cli/host_memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <limits>

namespace spmd {

std::int64_t host_physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_bytes = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(pages) * page_bytes;
}

std::optional<std::int64_t> address_space_limit_bytes() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<std::int64_t>(
      std::min<rlim_t>(limit.rlim_cur, std::numeric_limits<std::int64_t>::max()));
}

std::int64_t host_memory_bytes() {
  return std::min(host_physical_memory_bytes(),
                  address_space_limit_bytes().value_or(std::numeric_limits<std::int64_t>::max()));
}

}  // namespace spmd
