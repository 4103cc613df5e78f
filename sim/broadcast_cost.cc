#include "sim/broadcast_cost.h"

#include <fmt/format.h>

#include <numeric>

#include "reference/ring_order.h"
#include "sim/mesh_placement.h"
#include "sim/schedule_run.h"

namespace spmd::sim {
namespace {

using collectives::Algorithm;

Algorithm broadcast_algorithm(const Machine& machine, const collectives::CollectiveShape& shape,
                              std::string& note) {
  std::optional<Algorithm> requested = machine.options().algorithm;
  const auto by_kind = machine.spec().algorithms.find("broadcast");
  if (!requested && by_kind != machine.spec().algorithms.end()) requested = by_kind->second;
  if (requested && collectives::supports(*requested, shape)) return *requested;
  const Algorithm chosen = collectives::choose_algorithm(shape, machine.topology().traits());
  if (requested) {
    note = fmt::format("{} cannot run broadcast; used {}", collectives::algorithm_name(*requested),
                       collectives::algorithm_name(chosen));
  }
  return chosen;
}

}  // namespace

CollectiveRecord broadcast_cost(Machine& machine, std::int64_t elements, DType dtype) {
  const int n = machine.device_count();
  std::vector<int> ranks(static_cast<std::size_t>(n));
  std::iota(ranks.begin(), ranks.end(), 0);
  const MeshPlacement placement(machine.options().placement, Mesh({n}, {"i"}), machine.topology());
  const PlacedGroup group = placement.group(ranks);
  collectives::CollectiveShape shape;
  shape.kind = collectives::CollectiveKind::broadcast;
  shape.ranks = n;
  shape.elements = elements;
  shape.element_bytes = static_cast<std::int64_t>(dtype_size_bytes(dtype));
  if (!machine.options().ring_by_rank) {
    shape.ring = group_ring(machine.topology().ring_order(), group.devices);
  }
  shape.torus_dims = group.grid_dims;
  shape.pipeline_chunk_bytes = machine.spec().pipeline_chunk_bytes;

  CollectiveRecord record;
  record.op = "broadcast";
  record.call = "broadcast(root=0)";
  record.dtype = std::string(dtype_name(dtype));
  record.shape = fmt::format("[{}]", elements);
  record.bytes = elements * shape.element_bytes;
  record.algorithm_note.clear();
  const Algorithm algorithm = broadcast_algorithm(machine, shape, record.algorithm_note);
  record.algorithm = std::string(collectives::algorithm_name(algorithm));
  record.group_size = n;
  record.with_data = false;

  EventQueue events;
  LinkState links(machine.topology(), events, machine.link_sharing());
  MemoryLedger memory(n, machine.spec().memory_bytes);
  std::exception_ptr failure;
  start_schedule_run({machine.steps(algorithm, shape), group.devices, shape.element_bytes,
                      [call = record.call] { return call; }},
                     0, events, links, memory, [&](std::exception_ptr error) { failure = error; });
  while (!events.empty()) events.run_next();
  if (failure) std::rethrow_exception(failure);
  record.end_ps = events.now_ps();
  set_bandwidths(record);
  return record;
}

}  // namespace spmd::sim
