#pragma once
// Time on a link, in integer picoseconds. A message of B bytes over a route occupies every link
// of the route at once (cut-through) for the serialization time at the route's slowest link,
// and arrives after the sum of the links' latencies plus that serialization:
//   arrival = start + sum(latency_ps) + ceil(B * 1e12 / min(bandwidth_bytes_per_s)).
// The closed-form times in collectives/ and the simulator both use these functions, so an
// uncontended simulation equals the closed form exactly.

#include <fmt/format.h>

#include <cstdint>
#include <limits>

#include "reference/error.h"
#include "support/checked_math.h"
#include "support/wide_int.h"

namespace spmd::cost_model {

// ceil(bytes * 1e12 / bandwidth): exact, in 128 bits, since bytes * 1e12 passes 2^63 above 9 MB.
// Below that, the same quotient in unsigned 64 bits (numerator + bandwidth - 1 < 2^64), which is
// several times faster than the 128-bit division: every message of a cost-only run comes here.
inline std::int64_t serialization_ps(std::int64_t bytes, std::int64_t bandwidth_bytes_per_s) {
  constexpr std::int64_t kBytesIn63Bits = 9'223'372;  // floor((2^63 - 1) / 1e12)
  if (bytes >= 0 && bytes <= kBytesIn63Bits && bandwidth_bytes_per_s > 0) {
    const auto numerator = static_cast<std::uint64_t>(bytes) * 1'000'000'000'000u;
    const auto bandwidth = static_cast<std::uint64_t>(bandwidth_bytes_per_s);
    return static_cast<std::int64_t>((numerator + bandwidth - 1) / bandwidth);
  }
  const WideInt numerator = static_cast<WideInt>(bytes) * 1'000'000'000'000;
  const WideInt time_ps = (numerator + bandwidth_bytes_per_s - 1) / bandwidth_bytes_per_s;
  // 2^63 ps is 106 days: 9.3 MB at 1 B/s gets there (the cast used to wrap, so sizes past it
  // took less time).
  if (time_ps > std::numeric_limits<std::int64_t>::max()) {
    throw Error(fmt::format(
        "{} bytes at {} B/s take more than 2^63 ps (106 days), beyond what the simulator's clock "
        "holds",
        bytes, bandwidth_bytes_per_s));
  }
  return static_cast<std::int64_t>(time_ps);
}

inline std::int64_t transfer_time_ps(std::int64_t bytes, std::int64_t latency_ps,
                                     std::int64_t bandwidth_bytes_per_s) {
  return checked_add(latency_ps, serialization_ps(bytes, bandwidth_bytes_per_s),
                     "transfer time in ps (latency + serialization)");
}

// A route's links in series, as one: their latencies add up, the slowest sets the bandwidth.
struct RouteCost {
  std::int64_t latency_ps = 0;
  std::int64_t bandwidth_bytes_per_s = 0;  // 0 until the first link
};

inline RouteCost with_link(RouteCost route, std::int64_t link_latency_ps,
                           std::int64_t link_bandwidth_bytes_per_s) {
  route.latency_ps =
      checked_add(route.latency_ps, link_latency_ps, "route latency in ps (sum of its links')");
  if (route.bandwidth_bytes_per_s == 0 ||
      link_bandwidth_bytes_per_s < route.bandwidth_bytes_per_s) {
    route.bandwidth_bytes_per_s = link_bandwidth_bytes_per_s;
  }
  return route;
}

}  // namespace spmd::cost_model
