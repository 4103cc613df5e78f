// A simulated run on generated inputs (lazy_random_per_device, as `spmdsim perf` with data makes
// them) gives every device the bits the same inputs held in memory give; where the data path
// takes them a tile at a time (all-reduce, all-gather) they are never made whole.

#include <gtest/gtest.h>

#include <vector>

#include "sim/machine.h"
#include "support/random_array.h"

namespace spmd {
namespace {

using collectives::Algorithm;

// 1 KiB pipeline chunks: the ring's pieces are cut many times, and tiles start mid-piece.
sim::MachineSpec ring_of(int devices) {
  sim::MachineSpec spec;
  spec.name = "test ring";
  spec.devices = devices;
  spec.topology = topology::RingSpec{.devices = devices};
  spec.pipeline_chunk_bytes = 1024;
  return spec;
}

std::vector<Values> as_values(std::vector<Array> arrays) {
  std::vector<Values> out;
  for (Array& a : arrays) out.push_back(Values{std::move(a)});
  return out;
}

// Each device's result of `body` on the machine, from `inputs`.
std::vector<Values> run_on(const std::vector<Values>& inputs, Algorithm algorithm,
                           const DeviceFunction& body) {
  const int devices = static_cast<int>(inputs.size());
  sim::Machine machine(ring_of(devices), {.algorithm = algorithm});
  return machine.run(Mesh({devices}, {"i"}), inputs, body, false);
}

void expect_same_bits(const std::vector<Values>& got, const std::vector<Values>& expected) {
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t d = 0; d < got.size(); ++d) {
    EXPECT_TRUE(got[d].at(0).bitwise_equal(expected[d].at(0))) << "device " << d;
  }
}

TEST(GeneratedInputs, AnAllReduceHasTheBitsOfHeldInputsAndNeverMakesThem) {
  for (const Algorithm algorithm : {Algorithm::ring, Algorithm::direct, Algorithm::binary_tree}) {
    SCOPED_TRACE(collectives::algorithm_name(algorithm));
    const DeviceFunction psum = [](Context& ctx, const Values& xs) {
      return Values{ctx.psum(xs[0], AxisNames("i"))};
    };
    const RandomArrayOptions below_one{.max_exponent = 0};
    const std::vector<Values> lazy =
        as_values(lazy_random_per_device(DType::float32, {10007}, 8, 1, below_one));
    const std::vector<Values> held =
        as_values(random_per_device(DType::float32, {10007}, 8, 1, below_one));
    expect_same_bits(run_on(lazy, algorithm, psum), run_on(held, algorithm, psum));
    for (const Values& x : lazy) EXPECT_NE(x[0].element_generator(), nullptr);
  }
}

TEST(GeneratedInputs, GathersAndScattersHaveTheBitsOfHeldInputs) {
  const DeviceFunction gather = [](Context& ctx, const Values& xs) {
    return Values{ctx.all_gather(xs[0], AxisNames("i"))};
  };
  const DeviceFunction scatter = [](Context& ctx, const Values& xs) {
    return Values{ctx.psum_scatter(xs[0], AxisNames("i"), 0, true)};
  };
  const std::vector<Values> lazy = as_values(lazy_random_per_device(DType::bfloat16, {4096}, 4, 3));
  const std::vector<Values> held = as_values(random_per_device(DType::bfloat16, {4096}, 4, 3));
  expect_same_bits(run_on(lazy, Algorithm::ring, gather), run_on(held, Algorithm::ring, gather));
  for (const Values& x : lazy) EXPECT_NE(x[0].element_generator(), nullptr);
  // A scatter cuts each input into blocks first (sim/collective_layout.cc), which makes it.
  expect_same_bits(run_on(lazy, Algorithm::ring, scatter), run_on(held, Algorithm::ring, scatter));
}

}  // namespace
}  // namespace spmd
