#include "workloads/symmetric_step.h"

#include <fmt/format.h>

#include <memory>
#include <utility>

#include "reference/collective_groups.h"
#include "sim/library_timing.h"
#include "sim/mesh_placement.h"
#include "workloads/transformer_step.h"

namespace spmd {
namespace {

// Why the groups along `axis` are not all alike on the machine (how many of their ranks share a
// node, the grid they form), or nothing. A group's library time and buffers depend on those only.
std::optional<std::string> irregular_axis(const Mesh& mesh, int axis,
                                          const sim::MeshPlacement& placement,
                                          const sim::MachineSpec& machine) {
  const std::vector<std::vector<int>> groups = axis_groups(mesh, {axis});
  std::optional<int> ranks_per_node;
  std::optional<std::vector<int>> grid;
  for (const std::vector<int>& group : groups) {
    const sim::PlacedGroup placed = placement.group(group);
    const int spread = sim::group_ranks_per_node(machine, placed.devices);
    if (!ranks_per_node) {
      ranks_per_node = spread;
      grid = placed.grid_dims;
      continue;
    }
    if (spread != *ranks_per_node || placed.grid_dims != *grid) {
      return fmt::format("the {} groups lie differently on the nodes (devices {} and {} of "
                         "their groups on one node)",
                         mesh.axis_names()[static_cast<std::size_t>(axis)], *ranks_per_node,
                         spread);
    }
  }
  return std::nullopt;
}

std::vector<int> stage_representatives(const TransformerSpec& spec) {
  const int per_stage = static_cast<int>(spec.devices() / spec.pipeline);
  std::vector<int> representatives;
  for (int stage = 0; stage < spec.pipeline; ++stage) representatives.push_back(stage * per_stage);
  return representatives;
}

Mesh stage_mesh(const TransformerSpec& spec) {
  const Mesh full = transformer_mesh(spec);
  return Mesh({spec.pipeline, 1, 1, 1, 1}, full.axis_names());
}

// Machine options for the run of representatives, restored when it ends (also by an error).
class RepresentativeOptions {
 public:
  RepresentativeOptions(sim::Machine& machine, const TransformerSpec& spec)
      : machine_(machine), saved_(machine.options()) {
    const Mesh full = transformer_mesh(spec);
    sim::MeshPlacement placement(saved_.placement, full, machine.topology());
    const std::vector<int> representatives = stage_representatives(spec);
    sim::SimOptions options = saved_;
    options.placement = sim::PlacementSpec{.kind = sim::PlacementSpec::Kind::devices};
    for (int device : representatives) options.placement.devices.push_back(placement.device(device));
    options.mirror =
        std::make_shared<const sim::GroupMirror>(full, std::move(placement), representatives);
    machine_.set_options(std::move(options));
  }
  ~RepresentativeOptions() { machine_.set_options(saved_); }
  RepresentativeOptions(const RepresentativeOptions&) = delete;
  RepresentativeOptions& operator=(const RepresentativeOptions&) = delete;

 private:
  sim::Machine& machine_;
  sim::SimOptions saved_;
};

WorkloadRun run_representatives(sim::Machine& machine, const Workload& w,
                                const TransformerSpec& spec) {
  check_transformer_run(w, spec, machine);
  const Mesh mesh = stage_mesh(spec);
  const DeviceFunction step = transformer_training_step(spec);
  const std::vector<Values> inputs(static_cast<std::size_t>(spec.pipeline));
  WorkloadRun run;
  run.representatives = stage_representatives(spec);
  {
    const RepresentativeOptions options(machine, spec);
    for (int s = 0; s < w.steps; ++s) {
      machine.run(mesh, inputs, step, false);
      sim::append_run(run.log, machine.cost_log());
    }
  }
  // The log names the full mesh's placement, as the full run's does.
  run.log.placement = sim::MeshPlacement(machine.options().placement, transformer_mesh(spec),
                                         machine.topology())
                          .text();
  run.note = fmt::format("symmetric step: {} of {} devices simulated, one per pipeline stage",
                         spec.pipeline, spec.devices());
  return run;
}

}  // namespace

std::optional<std::string> symmetric_step_refusal(const TransformerSpec& spec,
                                                  const sim::Machine& machine) {
  const sim::MachineSpec& machine_spec = machine.spec();
  if (!machine_spec.faults.empty()) {
    return "the machine has faults (stragglers, degraded or failed links or devices), so its "
           "devices do not run alike";
  }
  if (!machine_spec.fabric) {
    return "the machine has no fabric: collectives are carried over links, where groups may "
           "meet";
  }
  if (!machine.topology().traits().private_routes) {
    return "the machine's routes cross other devices' links";
  }
  if (machine.options().record_link_transfers > 0) return "link messages are recorded";
  if (machine.options().mirror) return "the run is already one of representatives";
  const Mesh mesh = transformer_mesh(spec);
  const sim::MeshPlacement placement(machine.options().placement, mesh, machine.topology());
  for (int axis = 0; axis < static_cast<int>(mesh.shape().size()); ++axis) {
    if (std::optional<std::string> why = irregular_axis(mesh, axis, placement, machine_spec)) {
      return "irregular placement: " + *why;
    }
  }
  return std::nullopt;
}

WorkloadRun run_workload_symmetric(sim::Machine& machine, const Workload& w,
                                   bool allow_symmetric) {
  if (w.kind != WorkloadKind::transformer) return {run_workload(machine, w), {}, {}};
  const TransformerSpec spec = transformer_for_devices(w.transformer, machine.device_count());
  std::optional<std::string> refusal =
      allow_symmetric ? symmetric_step_refusal(spec, machine)
                      : std::optional<std::string>("--full-simulation");
  if (!refusal) return run_representatives(machine, w, spec);
  WorkloadRun run{run_workload(machine, w), {}, fmt::format("full run: {}", *refusal)};
  return run;
}

int representative_index(const TransformerSpec& spec, int full_device) {
  return static_cast<int>(full_device / (spec.devices() / spec.pipeline));
}

}  // namespace spmd
