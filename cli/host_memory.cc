#include "cli/host_memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <limits>

namespace spmd {

std::int64_t host_memory_bytes() {
  std::int64_t bytes = std::numeric_limits<std::int64_t>::max();
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_bytes = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_bytes > 0) bytes = static_cast<std::int64_t>(pages) * page_bytes;
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    bytes = std::min<std::int64_t>(bytes, static_cast<std::int64_t>(
                                              std::min<rlim_t>(limit.rlim_cur, bytes)));
  }
  return bytes;
}

}  // namespace spmd
