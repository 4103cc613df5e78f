#pragma once
// The stacks of the simulator's device fibers, and what AddressSanitizer must be told about them
// (docs/sanitizers.md). ASan knows one stack per thread; Boost.Context switches stacks without
// telling it. When an exception leaves frames on a fiber's stack, ASan's __asan_handle_no_return
// must clear their red zones, but it refuses a stack it does not know ("ASan is ignoring
// requested __asan_handle_no_return"), and a later function whose frame lands on those bytes is
// reported as a stack-buffer-overflow that is none. So each time code starts running on a stack
// (a device fiber starts or wakes, the engine resumes on the thread's own stack), the run tells
// ASan which stack that is. Without ASan the notes compile to nothing.

#include <boost/context/fixedsize_stack.hpp>
#include <boost/context/stack_context.hpp>
#include <cstddef>

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

// A Boost.Context StackAllocator: fixed-size stacks, each one's bounds written where it is told.
class RecordedStack {
 public:
  RecordedStack(std::size_t bytes, StackBounds* bounds) : stacks_(bytes), bounds_(bounds) {}
  boost::context::stack_context allocate();
  void deallocate(boost::context::stack_context& stack) noexcept { stacks_.deallocate(stack); }

 private:
  boost::context::fixedsize_stack stacks_;
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
