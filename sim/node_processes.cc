#include "sim/node_processes.h"

#include <map>

#include "sim/mesh_placement.h"

namespace spmd::sim {

int devices_per_node(const Machine& machine) {
  if (machine.spec().fabric) return machine.spec().fabric->devices_per_node;
  if (machine.topology().kind() == "hierarchical") return machine.topology().dims().at(1);
  return machine.device_count();
}

ProcessLayout node_processes(const Machine& machine, const Mesh& mesh) {
  const MeshPlacement placement(machine.options().placement, mesh, machine.topology());
  const int per_node = devices_per_node(machine);
  std::map<int, std::vector<int>> by_node;  // ordered: processes in node order
  for (int device = 0; device < mesh.device_count(); ++device) {
    by_node[placement.device(device) / per_node].push_back(device);
  }
  std::vector<std::vector<int>> local_devices;
  for (auto& [node, devices] : by_node) local_devices.push_back(std::move(devices));
  return ProcessLayout(std::move(local_devices), mesh.device_count());
}

}  // namespace spmd::sim
