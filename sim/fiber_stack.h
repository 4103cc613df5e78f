#pragma once
// The stacks of the simulator's device fibers, and what AddressSanitizer must be told about them
// (docs/sanitizers.md). ASan knows one stack per thread; Boost.Context switches stacks without
// telling it. When an exception leaves frames on a fiber's stack, ASan's __asan_handle_no_return
// must clear their red zones, but it refuses a stack it does not know ("ASan is ignoring
// requested __asan_handle_no_return"), and a later function whose frame lands on those bytes is
// reported as a stack-buffer-overflow that is none. So each time code starts running on a stack
// (a device fiber starts or wakes, the engine resumes on the thread's own stack), the run tells
// ASan which stack that is. Without ASan the notes compile to nothing.

#include <boost/context/stack_context.hpp>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define SPMD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPMD_ASAN 1
#endif
#endif

namespace spmd::sim {

struct StackBounds {
  const void* bottom = nullptr;  // lowest address
  std::size_t bytes = 0;         // 0: the thread's own stack, as ASan knew it first
};

// The stacks a machine's runs have finished with, kept for its next run. A run of N devices
// makes N fibers; at 100,000 devices, mapping and faulting in fresh stacks took most of each
// run's time, so a machine that runs many times (perf's sizes, a benchmark's iterations) reuses
// them. The pool holds stacks of one size, and keeps at most as many as the largest run made.
// Each fiber's allocator shares the pool: Boost.Fiber frees a finished fiber's stack on one of
// the thread's scheduler passes, which a run makes before it returns, but a pool that outlives
// its machine leaves no pass too late. Under ASan it keeps none: a stack left by a fiber that
// threw may still carry red zones of the frames the exception unwound.
class StackPool {
 public:
  StackPool() = default;
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;
  ~StackPool();

  // A stack of `bytes`: a kept one, else a new one (std::bad_alloc when the host has none).
  boost::context::stack_context take(std::size_t bytes);
  void give_back(boost::context::stack_context stack) noexcept;
  // How many stacks it keeps now.
  std::size_t kept() const { return kept_.size(); }

 private:
  void release_all() noexcept;

  std::vector<boost::context::stack_context> kept_;
};

// A Boost.Context StackAllocator: fixed-size stacks from a pool, each one's bounds written where
// it is told.
class RecordedStack {
 public:
  RecordedStack(std::shared_ptr<StackPool> pool, std::size_t bytes, StackBounds* bounds)
      : pool_(std::move(pool)), bytes_(bytes), bounds_(bounds) {}
  boost::context::stack_context allocate();
  void deallocate(boost::context::stack_context& stack) noexcept { pool_->give_back(stack); }

 private:
  std::shared_ptr<StackPool> pool_;
  std::size_t bytes_;
  StackBounds* bounds_;
};

// Tells ASan that the code now runs on `stack` (bytes 0: on the thread's own stack). Without
// ASan nothing, inline: it is on the path of every fiber switch.
#ifdef SPMD_ASAN
void note_running_on(const StackBounds& stack);
#else
inline void note_running_on(const StackBounds&) {}
#endif

}  // namespace spmd::sim
