#pragma once
// A RapidCheck generator of small SPMD programs (docs/testing.md): a mesh, shard_map (a random
// in_spec, check_vma on or off) or pmap (a random in_axis), one global input of order-sensitive
// data, and a chain of one to a few collective calls, each applied to the previous one's result.
// Output k is step k's result on every device, so a check compares every device after every step;
// the description lists the steps and types, which makes counterexamples readable.

#include <rapidcheck.h>

#include <cstdint>
#include <vector>

#include "reference/collective_call.h"
#include "support/random_array.h"
#include "testing/collective_call_generator.h"
#include "testing/generators.h"
#include "testing/program.h"

namespace spmd::testkit {

struct ProgramOptions {
  int max_devices = 8;
  int max_axes = 3;                // shard_map meshes have 1..max_axes axes; pmap has one
  int max_steps = 3;               // collective calls in a chain, at least one
  std::int64_t max_block_dim = 4;  // the input's per-device dims (plus the mesh's axis sizes)
  bool shard_map = true;           // which mappings to draw from (at least one)
  bool pmap = true;
  std::vector<DType> dtypes = all_dtypes();
  CollectiveCallOptions calls;  // the operations to draw; check_vma is drawn per program
  RandomArrayOptions data;      // the input's values
};

rc::Gen<Program> program(const ProgramOptions& options = {});

// The device function of a chain of collective calls: each step's result is the next step's
// operand (axis_index takes none); the function returns every step's result, with a new leading
// axis of one when `leading_device_axis` (so that an out_spec naming every mesh axis there stacks
// all devices' results).
DeviceFunction collective_chain(std::vector<CollectiveCall> steps, bool leading_device_axis);

}  // namespace spmd::testkit
