#pragma once
// The host memory one `spmdsim perf` collective with data holds, all devices together, from its
// op, device count and -e: what the reference's data paths keep at their peak, in buffers of -e
// (docs/simulator.md, beside the run memory estimate). Measured as peak resident memory less a cost-only run's, on 4
// and 8 devices at 32 MiB (16 devices and 64 and 128 MiB agree), and rounded to whole buffers;
// tests/perf_data_memory_test.cc holds the bound:
//   all_reduce      1 in all: inputs are made a tile at a time where the schedule reads them,
//                   and every device's result is one shared array (copy on write)
//   all_gather      4 in all
//   reduce_scatter  2 a device and 2 in all
//   all_to_all      4 a device and 2 in all
//   ppermute        1 a device
//   broadcast       none: perf times it without data

#include <cstdint>
#include <string_view>

namespace spmd {

struct PerfDataBuffers {
  std::int64_t in_all = 0;      // buffers of -e, whatever the device count
  std::int64_t per_device = 0;  // buffers of -e on each device
};
PerfDataBuffers perf_data_buffers(std::string_view op);

// perf_data_buffers(op) in bytes for `devices` devices and -e `bytes`; sums past 2^63 - 1
// saturate (such a run fits no host).
std::int64_t perf_data_bytes(std::string_view op, int devices, std::int64_t bytes);

}  // namespace spmd
