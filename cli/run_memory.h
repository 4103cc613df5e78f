#pragma once
// What a simulated run of N devices needs of the host's memory, estimated before its machine is
// built, and the refusal of a run that cannot fit (issue 42). Without it a run of a billion
// devices grew for minutes, to 7.9 GB, before the host refused an allocation; one of 100,000
// devices with data to 4.8 GB.

#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/machine_spec.h"

namespace spmd {

struct RunMemory {
  int devices = 0;
  std::size_t stack_bytes = 0;           // each device fiber's stack, mapped whole
  std::int64_t state_bytes = 0;          // each device's state in the simulator, touched
  std::int64_t pair_bytes = 0;           // per pair of devices: links, a flat ring's schedule
  std::int64_t data_bytes = 0;           // each device's data (inputs, outputs, buffers)
  std::int64_t resident_bytes = 0;       // what the run touches, in all
  std::int64_t address_space_bytes = 0;  // what it maps, in all: untouched stack pages too
};

// The estimate for a run on `spec`'s devices, each holding `data_bytes_per_device` of data (0 for
// a cost-only run), with fiber stacks of `configured_stack_bytes` (0: the default). Sums that
// pass 2^63 - 1 saturate: such a run fits no host.
RunMemory simulated_run_memory(const sim::MachineSpec& spec, std::int64_t data_bytes_per_device,
                               std::size_t configured_stack_bytes = 0);

// Throws spmd::Error, one line starting with `what` (the flag or file that set the device count,
// e.g. "--devices 1000000000"), where the estimate passes the host's memory or the process's
// address-space limit (ulimit -v). The line says how many devices would fit; `remedy`, where
// given, adds what else would ("a smaller -e, or --cost-only").
void check_run_fits_host(const RunMemory& need, const std::string& what,
                         const std::string& remedy = "");

}  // namespace spmd
