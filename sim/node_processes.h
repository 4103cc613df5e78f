#pragma once
// A multi-process program on a modeled machine: one process per node, as a job launcher starts
// one JAX process per host. Each process's local devices are the mesh devices placed on its node
// (sim/mesh_placement.h); nodes with no mesh device start no process. The layout goes to the
// multi-process API (reference/multi_process.h); the program itself runs on the machine as any
// shard_map program does (run_shard_map_global).

#include "reference/process_layout.h"
#include "sim/machine.h"

namespace spmd::sim {

// Devices per node on `machine`: the fabric's scale-up domain where it has one, the
// hierarchical topology's node size, otherwise the whole machine (one node).
int devices_per_node(const Machine& machine);

// The processes of `mesh` run on `machine` under its placement, one per node in node order.
ProcessLayout node_processes(const Machine& machine, const Mesh& mesh);

}  // namespace spmd::sim
