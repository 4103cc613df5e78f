#pragma once
// A started collective (Context::collective_start and friends), as XLA's all-reduce-start /
// all-reduce-done pair: the device goes on with its own work and later waits for the result.
// The handle is move-only and must be waited exactly once, on the device that started it:
//  - wait() twice, or on an empty / moved-from handle, throws spmd::Error;
//  - a handle dropped without wait() (destroyed or assigned over) is recorded by its Context,
//    which throws spmd::Error at the device's next collective start or wait, or when its device
//    function returns (unless the handle died while another exception was unwinding: that error
//    wins);
//  - waiting on a handle from another device's Context throws spmd::Error.
// A handle must not outlive the device function that started it (it refers to its Context).

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "reference/array.h"
#include "reference/collective_call.h"
#include "reference/dtype.h"

namespace spmd {

class Context;

// How a started collective is ordered against the device's other collectives in flight.
struct StartOptions {
  // -1: independent; it may run while the device's other started collectives run (their
  // transfers share the links). k >= 0: the collectives a device starts on stream k run one
  // after another in the order it started them, as on one NCCL communicator's CUDA stream.
  int stream = -1;
};

// A started collective's call, element type and operand shape, shared by its handle and its
// Context to name it in errors. The text is formatted only when an error needs it: formatting it
// at every start took a quarter of the time of simulating a 280-GPU training step.
struct StartedCall {
  CollectiveCall call;
  DType dtype = DType::float32;
  Shape shape;

  std::string text() const;  // "psum('i') of float32[3]"
};

class PendingCollective {
 public:
  PendingCollective() = default;  // holds nothing: wait() is an error
  PendingCollective(PendingCollective&& other) noexcept;
  PendingCollective& operator=(PendingCollective&& other) noexcept;
  PendingCollective(const PendingCollective&) = delete;
  PendingCollective& operator=(const PendingCollective&) = delete;
  ~PendingCollective();

  // Blocks until the collective has finished on this device and returns its result (an empty
  // Array for a collective_cost_start).
  Array wait();
  // Started and not yet waited.
  bool pending() const { return state_ == State::pending; }
  // "psum('i') of float32[3]".
  std::string what() const { return what_ ? what_->text() : std::string(); }

 private:
  friend class Context;
  enum class State { empty, pending, waited };
  PendingCollective(Context& context, std::uint64_t ticket, std::shared_ptr<const StartedCall> what)
      : context_(&context), ticket_(ticket), what_(std::move(what)), state_(State::pending) {}
  void drop() noexcept;

  Context* context_ = nullptr;
  std::uint64_t ticket_ = 0;  // the Context's count of starts before this one
  std::shared_ptr<const StartedCall> what_;
  State state_ = State::empty;
};

}  // namespace spmd
