// SPMD_CHECK and spmd::InternalError (reference/check.h): always on, never an spmd::Error, the
// message built only on failure; and the simulator's invariants that use them.

#include "reference/check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "collectives/schedule.h"
#include "reference/error.h"
#include "sim/event_queue.h"
#include "sim/machine.h"
#include "sim/memory_ledger.h"

namespace spmd {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The message of the InternalError `f` throws; a test failure if it throws none.
template <typename F>
std::string internal_error_of(F f) {
  try {
    f();
  } catch (const InternalError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an spmd::InternalError";
  return "";
}

static_assert(!std::is_base_of_v<Error, InternalError>,
              "handlers of bad input (spmd::Error) must not catch internal errors");

TEST(Check, ThrowsInternalErrorWithFileLineConditionAndMessage) {
  const int held = 3;
  const std::string message =
      internal_error_of([&] { SPMD_CHECK(held > 5, "held " + std::to_string(held) + " bytes"); });
  EXPECT_THAT(message, AllOf(StartsWith("tests/check_test.cc:"),
                             HasSubstr(": check failed: held > 5: held 3 bytes")));
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(Check, BuildsTheMessageOnlyOnFailure) {
  int messages_built = 0;
  const auto message = [&] {
    ++messages_built;
    return std::string("built");
  };
  SPMD_CHECK(1 + 1 == 2, message());
  EXPECT_EQ(messages_built, 0);
  internal_error_of([&] { SPMD_CHECK(1 + 1 == 3, message()); });
  EXPECT_EQ(messages_built, 1);
}

TEST(Check, IsNotCaughtAsBadInput) {
  bool caught_as_error = false;
  EXPECT_THROW(
      {
        try {
          SPMD_CHECK(false, "a bug");
        } catch (const Error&) {
          caught_as_error = true;
        }
      },
      InternalError);
  EXPECT_FALSE(caught_as_error);
}

TEST(Invariants, MemoryLedgerNeverGoesNegative) {
  sim::MemoryLedger ledger(2, 1000);
  ledger.allocate(1, 300, 0, "inputs");
  EXPECT_THAT(internal_error_of([&] { ledger.release(1, 301, 5); }),
              AllOf(HasSubstr("sim/memory_ledger.cc"), HasSubstr("device 1"),
                    HasSubstr("301 bytes"), HasSubstr("300 bytes")));
  EXPECT_EQ(ledger.in_use_bytes(1), 300);
}

TEST(Invariants, VirtualTimeNeverGoesBack) {
  sim::EventQueue events;
  events.schedule(10, [] {});
  events.run_next();
  EXPECT_THAT(internal_error_of([&] { events.schedule(9, [] {}); }),
              HasSubstr("event at 9 ps is before now (10 ps)"));
  EXPECT_THAT(internal_error_of([&] { events.run_next(); }), HasSubstr("empty"));
}

TEST(Invariants, AScheduleAnAlgorithmBuiltIsValid) {
  collectives::Schedule schedule;
  schedule.ranks = 2;
  schedule.input_elements = 4;
  schedule.work_elements = 4;
  schedule.input_offset = {0, 0};
  schedule.result_begin = {0, 0};
  schedule.result_end = {4, 4};
  schedule.steps.push_back({{collectives::Transfer{0, 2, 0, 4, 0}}});
  EXPECT_THAT(internal_error_of([&] { schedule.validate(); }),
              HasSubstr("schedule step 0 transfer 0: source 0 / destination 2"));
  // A transfer in the message of the one before it must go between the same ranks.
  using collectives::SourceBuffer;
  using collectives::TransferAction;
  schedule.steps[0].transfers = {
      collectives::Transfer{0, 1, 0, 2, 0},
      collectives::Transfer{1, 0, 2, 4, 2, SourceBuffer::work, TransferAction::copy, true}};
  EXPECT_THAT(internal_error_of([&] { schedule.validate(); }),
              HasSubstr("schedule step 0 transfer 1: in the message of the transfer before it"));
  schedule.steps[0].transfers[1].source = 0;
  schedule.steps[0].transfers[1].destination = 1;
  EXPECT_NO_THROW(schedule.validate());
}

// An internal error on a device leaves Machine::run as itself, like an spmd::Error, with every
// fiber joined.
TEST(Invariants, InternalErrorsLeaveASimulatedRun) {
  sim::MachineSpec spec;
  spec.devices = 4;
  spec.topology = topology::RingSpec{.devices = 4};
  sim::Machine machine(spec);
  const Mesh mesh({4}, {"i"});
  const std::vector<Values> inputs(4);
  EXPECT_THAT(internal_error_of([&] {
                machine.run(
                    mesh, inputs,
                    [](Context& ctx, const Values&) -> Values {
                      SPMD_CHECK(ctx.device() != 2, "device 2 broke");
                      ctx.psum(Array::scalar<float>(1), AxisNames("i"));
                      return {};
                    },
                    false);
              }),
              HasSubstr("device 2 broke"));
}

}  // namespace
}  // namespace spmd
