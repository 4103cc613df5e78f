// The simulator's pool of device fiber stacks (sim/fiber_stack.h): what it hands out and keeps,
// and that runs which reuse its stacks give what fresh stacks give.

#include "sim/fiber_stack.h"

#include <gtest/gtest.h>

#include <vector>

#include "reference/array.h"
#include "reference/context.h"
#include "sim/machine.h"
#include "tests/test_machines.h"

namespace spmd {
namespace {

using test_machines::machine_for;

constexpr std::size_t kStackBytes = 64 * 1024;

#ifdef SPMD_ASAN
constexpr bool kPoolKeeps = false;  // under ASan it keeps none (sim/fiber_stack.h says why)
#else
constexpr bool kPoolKeeps = true;
#endif

TEST(StackPool, HandsOutAStackItWasGivenBackAtTheSameSize) {
  sim::StackPool pool;
  const boost::context::stack_context first = pool.take(kStackBytes);
  EXPECT_EQ(first.size, kStackBytes);
  pool.give_back(first);
  EXPECT_EQ(pool.kept(), kPoolKeeps ? 1u : 0u);
  const boost::context::stack_context second = pool.take(kStackBytes);
  EXPECT_EQ(second.size, kStackBytes);
  if (kPoolKeeps) {
    EXPECT_EQ(second.sp, first.sp);
  }
  EXPECT_EQ(pool.kept(), 0u);
  pool.give_back(second);
}

TEST(StackPool, AnotherSizeGetsAStackOfItsOwnAndTheKeptOnesGo) {
  sim::StackPool pool;
  std::vector<boost::context::stack_context> stacks;
  for (int i = 0; i < 3; ++i) stacks.push_back(pool.take(kStackBytes));
  for (const auto& stack : stacks) pool.give_back(stack);
  EXPECT_EQ(pool.kept(), kPoolKeeps ? 3u : 0u);
  const boost::context::stack_context larger = pool.take(4 * kStackBytes);
  EXPECT_EQ(larger.size, 4 * kStackBytes);
  EXPECT_EQ(pool.kept(), 0u);
  pool.give_back(larger);
}

// A psum of each device's number over 64 devices: outputs and the cost log of one run.
struct RunResult {
  std::vector<Values> outputs;
  std::int64_t end_ps = 0;
  std::size_t collectives = 0;
};

RunResult run_psum(sim::Machine& machine) {
  const int devices = machine.device_count();
  const Mesh mesh({devices}, {"i"});
  std::vector<Values> inputs;
  for (int d = 0; d < devices; ++d) inputs.push_back({Array::scalar<float>(0.5f * d)});
  RunResult result;
  result.outputs = machine.run(
      mesh, inputs,
      [](Context& ctx, const Values& xs) { return Values{ctx.psum(xs[0], AxisNames("i"))}; },
      false);
  result.end_ps = machine.cost_log().end_ps;
  result.collectives = machine.cost_log().collectives.size();
  return result;
}

void expect_same(const RunResult& a, const RunResult& b) {
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  for (std::size_t d = 0; d < a.outputs.size(); ++d) {
    EXPECT_TRUE(a.outputs[d][0].bitwise_equal(b.outputs[d][0])) << "device " << d;
  }
  EXPECT_EQ(a.end_ps, b.end_ps);
  EXPECT_EQ(a.collectives, b.collectives);
}

TEST(MachineStacks, RunsOnReusedStacksGiveWhatTheFirstRunGave) {
  sim::Machine machine(machine_for("switch", 64));
  const RunResult first = run_psum(machine);
  EXPECT_EQ(machine.fiber_stacks()->kept(), kPoolKeeps ? 64u : 0u);
  for (int run = 0; run < 3; ++run) expect_same(run_psum(machine), first);
}

// A machine goes with the stacks its pool kept (and the thread's fiber scheduler may still hold
// finished fibers that give theirs back later): a later machine on the same thread runs whole.
TEST(MachineStacks, AnotherMachineRunsWholeAfterTheFirstIsGone) {
  RunResult first;
  {
    sim::Machine gone(machine_for("switch", 64));
    first = run_psum(gone);
  }
  sim::Machine next(machine_for("switch", 64));
  expect_same(run_psum(next), first);
}

}  // namespace
}  // namespace spmd
