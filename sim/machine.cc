#include "sim/machine.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include "reference/error.h"
#include "sim/sim_run.h"

namespace spmd::sim {

namespace {

// What a schedule depends on: the algorithm and every field of the shape. Compared as a tuple,
// not formatted into text: the simulator looks a schedule up at every group's start, and a lookup
// compares the caller's shape in place (ScheduleKeyView) without copying it.
struct ScheduleKey {
  collectives::Algorithm algorithm;
  collectives::CollectiveShape shape;
};
struct ScheduleKeyView {
  collectives::Algorithm algorithm;
  const collectives::CollectiveShape& shape;
};

template <typename Key>
auto key_fields(const Key& key) {
  const collectives::CollectiveShape& shape = key.shape;
  return std::tie(key.algorithm, shape.kind, shape.ranks, shape.elements, shape.element_bytes,
                  shape.ring, shape.torus_dims, shape.permutation, shape.root,
                  shape.pipeline_chunk_bytes);
}

struct ScheduleKeyLess {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return key_fields(a) < key_fields(b);
  }
};

}  // namespace

// Schedules and step sources by algorithm and shape: a training loop issues the same collectives
// every step. Cost-only runs ask only for step sources, so they never hold a whole schedule.
struct Machine::ScheduleCache {
  std::map<ScheduleKey, std::shared_ptr<const collectives::Schedule>, ScheduleKeyLess> schedules;
  std::map<ScheduleKey, std::shared_ptr<const collectives::StepSource>, ScheduleKeyLess> steps;
};

namespace {

// Bounded: a program with ever-new shapes should not hold every schedule it ever used.
constexpr std::size_t kCachedShapes = 256;

template <typename T, typename Make>
std::shared_ptr<const T> cached(
    std::map<ScheduleKey, std::shared_ptr<const T>, ScheduleKeyLess>& cache,
    collectives::Algorithm algorithm, const collectives::CollectiveShape& shape, Make make) {
  auto it = cache.find(ScheduleKeyView{algorithm, shape});
  if (it != cache.end()) return it->second;
  std::shared_ptr<const T> made = make();
  if (cache.size() >= kCachedShapes) cache.clear();
  cache.emplace(ScheduleKey{algorithm, shape}, made);
  return made;
}

}  // namespace

Machine::Machine(MachineSpec spec, SimOptions options)
    : spec_(std::move(spec)),
      options_(std::move(options)),
      topology_(topology::make_topology(spec_.topology)),
      schedules_(std::make_unique<ScheduleCache>()) {
  if (topology_->device_count() != spec_.devices) {
    throw Error(fmt::format("machine devices: {}, but the topology {} has {}", spec_.devices,
                            topology_->name(), topology_->device_count()));
  }
  check_faults(spec_.faults, *topology_, "faults");
}

Machine::~Machine() = default;

std::shared_ptr<const collectives::Schedule> Machine::schedule(
    collectives::Algorithm algorithm, const collectives::CollectiveShape& shape) {
  return cached(schedules_->schedules, algorithm, shape, [&] {
    return std::make_shared<const collectives::Schedule>(
        collectives::build_schedule(algorithm, shape));
  });
}

std::shared_ptr<const collectives::StepSource> Machine::steps(
    collectives::Algorithm algorithm, const collectives::CollectiveShape& shape) {
  return cached(schedules_->steps, algorithm, shape,
                [&] { return collectives::step_source(algorithm, shape); });
}

std::vector<Values> Machine::run(const Mesh& mesh, const std::vector<Values>& inputs,
                                 const DeviceFunction& function, bool check_vma) {
  if (mesh.device_count() > spec_.devices) {
    throw Error(
        fmt::format("mesh of {} devices on machine '{}' with {}, expected at most that many",
                    mesh.device_count(), spec_.name, spec_.devices));
  }
  if (inputs.size() != static_cast<std::size_t>(mesh.device_count())) {
    throw Error(fmt::format("Machine::run: {} input lists for a mesh of {} devices", inputs.size(),
                            mesh.device_count()));
  }
  SimRun sim_run(*this, mesh, check_vma);
  std::vector<Values> outputs;
  try {
    outputs = sim_run.run(inputs, function);
  } catch (...) {
    cost_log_ = sim_run.take_cost_log();
    fault_origin_ps_ += cost_log_.end_ps;
    throw;
  }
  cost_log_ = sim_run.take_cost_log();
  fault_origin_ps_ += cost_log_.end_ps;
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

ScopedLibraryChoice::ScopedLibraryChoice(Context& context, LibraryChoice choice)
    : context_(context) {
  if (auto* sim = dynamic_cast<SimContext*>(&context_)) {
    previous_ = sim->library_override;
    sim->library_override = choice;
  }
}

ScopedLibraryChoice::~ScopedLibraryChoice() {
  if (auto* sim = dynamic_cast<SimContext*>(&context_)) sim->library_override = previous_;
}

}  // namespace spmd::sim
