#pragma once
// The pieces of the Python module spmdsim._core (python/core_module.cc), one file each. Arrays
// cross the boundary as (dtype name, shape, bytes): NumPy has no bfloat16 of its own, so the
// Python side (python/spmdsim/_arrays.py) turns them into ndarrays.

#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "reference/array.h"

namespace spmd::python {

// One array as it crosses into or out of the module: dtype name ("float32", "bfloat16", ...),
// shape, and the row-major little-endian element bytes (bfloat16 as its 16-bit patterns).
using WireArray = std::tuple<std::string, std::vector<std::int64_t>, nanobind::bytes>;

Array array_from_wire(const WireArray& wire, const std::string& argument);
WireArray array_to_wire(const Array& array);

void bind_collective(nanobind::module_& module);  // run_collective, order and op names
void bind_conform(nanobind::module_& module);     // conform_case
void bind_estimate(nanobind::module_& module);    // estimate_hlo, machine_preset_names
void bind_sharding(nanobind::module_& module);    // sharding_text

}  // namespace spmd::python
