// Property tests with spmdsim's testing kit (docs/testing.md), from a project of its own: your
// SPMD code, and generated programs of collectives, run on the simulator and checked bit for bit
// against the reference folding sums in the simulated algorithm's order.
#include <rapidcheck.h>

#include <cstdio>

#include "sim/machine.h"
#include "sim/machine_spec.h"
#include "testing/check_against_reference.h"
#include "testing/generators.h"
#include "testing/program_generator.h"
#include "topology/topology_spec.h"

using namespace spmd;

// Your SPMD code: a data-parallel gradient sync as ZeRO does it. Each device reduce-scatters its
// gradient over 'data' and all-gathers the summed shards back.
Values sync_gradient(Context& ctx, const Values& args) {
  const Array shard = ctx.psum_scatter(args[0], "data", /*scatter_dimension=*/1, /*tiled=*/true);
  return {ctx.all_gather(shard, "data", /*axis=*/1, /*tiled=*/true)};
}

// A simulated machine of `devices` on a switch, running every collective as a ring in group rank
// order, which folds sums as the reference's nccl_ring order does.
sim::Machine ring_machine(int devices) {
  sim::MachineSpec spec;
  spec.devices = devices;
  spec.topology = topology::topology_from_text("switch", devices);
  return sim::Machine(spec, {.algorithm = collectives::Algorithm::ring, .ring_by_rank = true});
}

const ReductionOrder kRingOrder{.algorithm = ReductionAlgorithm::nccl_ring};

int main() {
  const bool your_code_holds = rc::check("sync_gradient on the simulator is the reference's", [] {
    const int devices = *rc::gen::inRange(1, 9);
    const std::int64_t shard_elements = *rc::gen::inRange(1, 5);
    const Mesh mesh({devices}, {"data"});
    testkit::Program program{
        .description = "sync_gradient on " + mesh.to_string(),
        .mesh = mesh,
        .mapping = ShardMapOptions{.in_specs = {PartitionSpec({{"data"}})},
                                   .out_specs = {PartitionSpec({{"data"}})}},
        .function = sync_gradient,
        // Device d's gradient is row d: floats whose sums depend on the order of addition.
        .inputs = {
            *testkit::order_sensitive_array(DType::float32, {devices, devices * shard_elements})}};
    sim::Machine machine = ring_machine(devices);
    testkit::rc_assert_matches_reference(machine, program, kRingOrder);
  });

  const bool collectives_hold = rc::check("generated programs on the simulator", [] {
    const testkit::Program program = *testkit::program({.max_devices = 8});
    sim::Machine machine = ring_machine(program.mesh.device_count());
    testkit::rc_assert_matches_reference(machine, program, kRingOrder);
  });

  if (!your_code_holds || !collectives_hold) return 1;
  std::printf("both properties hold\n");
  return 0;
}
