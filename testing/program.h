#pragma once
// A program to test (docs/testing.md): a per-device function, how it is mapped over devices
// (shard_map on a mesh, or pmap), its global inputs, and a description for reports and RapidCheck
// counterexamples. testing/program_generator.h generates them from collective steps; a user
// writes one around their own DeviceFunction to check it on every backend
// (testing/check_against_reference.h).

#include <ostream>
#include <string>
#include <variant>

#include "reference/backend.h"
#include "reference/mesh.h"
#include "reference/pmap.h"
#include "reference/shard_map.h"

namespace spmd::testkit {

struct Program {
  // What the program does, for people: printed in counterexamples, not parsed.
  std::string description;
  // The devices it runs on: shard_map's mesh, or for pmap the mesh pmap builds (one axis named
  // options.axis_name, of the mapped size), which reports use to name devices.
  Mesh mesh;
  std::variant<ShardMapOptions, PmapOptions> mapping;
  DeviceFunction function;
  Values inputs;  // global arguments, split by the mapping
};

// The program's global outputs on `backend` (run_shard_map or run_pmap). spmd::Error as the
// backend raises it.
Values run_program(Backend& backend, const Program& program);

// Which device's result holds element `index` of global output `output` (of `output_shape`), and
// where in it: "device 5, element (1, 1)". Of the devices holding a replicated block, the first
// in id order, which the global output was read from.
std::string device_element(const Program& program, int output, const Shape& output_shape,
                           const Shape& index);

inline void showValue(const Program& program, std::ostream& os) { os << program.description; }

}  // namespace spmd::testkit
