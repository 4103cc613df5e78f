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
#include <string>
#include <utility>

#include "reference/array.h"

namespace spmd {

class Context;

// How a started collective is ordered against the device's other collectives in flight.
struct StartOptions {
  // -1: independent; it may run while the device's other started collectives run (their
  // transfers share the links). k >= 0: the collectives a device starts on stream k run one
  // after another in the order it started them, as on one NCCL communicator's CUDA stream.
  int stream = -1;
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
  const std::string& what() const { return what_; }

 private:
  friend class Context;
  enum class State { empty, pending, waited };
  PendingCollective(Context& context, std::uint64_t ticket, std::string what)
      : context_(&context), ticket_(ticket), what_(std::move(what)), state_(State::pending) {}
  void drop() noexcept;

  Context* context_ = nullptr;
  std::uint64_t ticket_ = 0;  // the Context's count of starts before this one
  std::string what_;
  State state_ = State::empty;
};

}  // namespace spmd
