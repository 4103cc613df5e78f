#pragma once
// Time on a link, in integer picoseconds. A message of B bytes over a route occupies every link
// of the route at once (cut-through) for the serialization time at the route's slowest link,
// and arrives after the sum of the links' latencies plus that serialization:
//   arrival = start + sum(latency_ps) + ceil(B * 1e12 / min(bandwidth_bytes_per_s)).
// The closed-form times in collectives/ and the simulator both use these functions, so an
// uncontended simulation equals the closed form exactly.

#include <cstdint>

namespace spmd::topology {

__extension__ typedef __int128 WideInt;  // __extension__: GNU's 128-bit integer under -Wpedantic

inline std::int64_t serialization_ps(std::int64_t bytes, std::int64_t bandwidth_bytes_per_s) {
  const WideInt numerator = static_cast<WideInt>(bytes) * 1'000'000'000'000;
  return static_cast<std::int64_t>((numerator + bandwidth_bytes_per_s - 1) / bandwidth_bytes_per_s);
}

inline std::int64_t transfer_time_ps(std::int64_t bytes, std::int64_t latency_ps,
                                     std::int64_t bandwidth_bytes_per_s) {
  return latency_ps + serialization_ps(bytes, bandwidth_bytes_per_s);
}

}  // namespace spmd::topology
