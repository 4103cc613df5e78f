#include "sim/machine.h"

#include <map>

#include "reference/error.h"
#include "sim/sim_run.h"

namespace spmd::sim {

// Schedules by algorithm and shape: a training loop issues the same collectives every step.
struct Machine::ScheduleCache {
  std::map<std::string, std::shared_ptr<const collectives::Schedule>> by_key;
};

namespace {

std::string join(const std::vector<int>& values) {
  std::string text;
  for (int v : values) text += std::to_string(v) + ",";
  return text;
}

std::string schedule_key(collectives::Algorithm algorithm,
                         const collectives::CollectiveShape& shape) {
  std::string key = std::string(collectives::algorithm_name(algorithm)) + "|" +
                    std::string(collectives::collective_kind_name(shape.kind)) + "|" +
                    std::to_string(shape.ranks) + "|" + std::to_string(shape.elements) + "|" +
                    std::to_string(shape.element_bytes) + "|" + join(shape.ring) + "|" +
                    join(shape.torus_dims) + "|" + std::to_string(shape.root) + "|" +
                    std::to_string(shape.pipeline_chunk_bytes) + "|";
  for (auto [source, destination] : shape.permutation) {
    key += std::to_string(source) + ">" + std::to_string(destination) + ",";
  }
  return key;
}

}  // namespace

Machine::Machine(MachineSpec spec, SimOptions options)
    : spec_(std::move(spec)),
      options_(std::move(options)),
      topology_(topology::make_topology(spec_.topology)),
      schedules_(std::make_unique<ScheduleCache>()) {
  if (topology_->device_count() != spec_.devices) {
    throw Error("machine devices: " + std::to_string(spec_.devices) + ", but the topology " +
                topology_->name() + " has " + std::to_string(topology_->device_count()));
  }
}

Machine::~Machine() = default;

std::shared_ptr<const collectives::Schedule> Machine::schedule(
    collectives::Algorithm algorithm, const collectives::CollectiveShape& shape) {
  const std::string key = schedule_key(algorithm, shape);
  auto it = schedules_->by_key.find(key);
  if (it != schedules_->by_key.end()) return it->second;
  auto built = std::make_shared<const collectives::Schedule>(
      collectives::build_schedule(algorithm, shape));
  // Bounded: a program with ever-new shapes should not hold every schedule it ever used.
  if (schedules_->by_key.size() >= 256) schedules_->by_key.clear();
  schedules_->by_key.emplace(key, built);
  return built;
}

std::vector<Values> Machine::run(const Mesh& mesh, const std::vector<Values>& inputs,
                                 const DeviceFunction& function, bool check_vma) {
  if (mesh.device_count() > spec_.devices) {
    throw Error("mesh of " + std::to_string(mesh.device_count()) + " devices on machine '" +
                spec_.name + "' with " + std::to_string(spec_.devices) +
                ", expected at most that many");
  }
  if (inputs.size() != static_cast<std::size_t>(mesh.device_count())) {
    throw Error("Machine::run: " + std::to_string(inputs.size()) + " input lists for a mesh of " +
                std::to_string(mesh.device_count()) + " devices");
  }
  SimRun sim_run(*this, mesh, check_vma);
  std::vector<Values> outputs;
  try {
    outputs = sim_run.run(inputs, function);
  } catch (...) {
    cost_log_ = sim_run.take_cost_log();
    throw;
  }
  cost_log_ = sim_run.take_cost_log();
  return outputs;
}

ScopedAlgorithm::ScopedAlgorithm(Context& context, collectives::Algorithm algorithm)
    : context_(context) {
  if (auto* sim = dynamic_cast<SimContext*>(&context_)) {
    previous_ = sim->algorithm_override;
    sim->algorithm_override = algorithm;
  }
}

ScopedAlgorithm::~ScopedAlgorithm() {
  if (auto* sim = dynamic_cast<SimContext*>(&context_)) sim->algorithm_override = previous_;
}

}  // namespace spmd::sim
