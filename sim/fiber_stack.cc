#include "sim/fiber_stack.h"

#ifdef SPMD_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace spmd::sim {

boost::context::stack_context RecordedStack::allocate() {
  boost::context::stack_context stack = stacks_.allocate();
  // Stacks grow down: sp is the top.
  bounds_->bottom = static_cast<const char*>(stack.sp) - stack.size;
  bounds_->bytes = stack.size;
  return stack;
}

#ifdef SPMD_ASAN

namespace {

// The thread's own stack as ASan knew it before the first note on this thread.
thread_local StackBounds thread_stack;

}  // namespace

// A switch announced and finished at once, from the stack just arrived on: ASan's fake stack
// (detect_stack_use_after_return) is passed through unchanged.
void note_running_on(const StackBounds& stack) {
  const StackBounds target = stack.bytes == 0 ? thread_stack : stack;
  if (target.bytes == 0) return;  // still on the thread's stack, never left
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, target.bottom, target.bytes);
  const void* previous_bottom = nullptr;
  std::size_t previous_bytes = 0;
  __sanitizer_finish_switch_fiber(fake_stack, &previous_bottom, &previous_bytes);
  if (thread_stack.bytes == 0) thread_stack = {previous_bottom, previous_bytes};
}

#endif

}  // namespace spmd::sim
