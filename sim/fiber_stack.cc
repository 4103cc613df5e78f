#include "sim/fiber_stack.h"

#include <boost/context/fixedsize_stack.hpp>
#include <new>

#ifdef SPMD_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace spmd::sim {

StackPool::~StackPool() { release_all(); }

boost::context::stack_context StackPool::take(std::size_t bytes) {
  if (!kept_.empty() && kept_.back().size != bytes) release_all();
  if (kept_.empty()) return boost::context::fixedsize_stack(bytes).allocate();
  const boost::context::stack_context stack = kept_.back();
  kept_.pop_back();
  return stack;
}

void StackPool::give_back(boost::context::stack_context stack) noexcept {
#ifndef SPMD_ASAN
  try {
    kept_.push_back(stack);
    return;
  } catch (const std::bad_alloc&) {
    // No room to keep it: free it instead.
  }
#endif
  boost::context::fixedsize_stack(stack.size).deallocate(stack);
}

void StackPool::release_all() noexcept {
  for (boost::context::stack_context& stack : kept_) {
    boost::context::fixedsize_stack(stack.size).deallocate(stack);
  }
  kept_.clear();
}

boost::context::stack_context RecordedStack::allocate() {
  boost::context::stack_context stack = pool_->take(bytes_);
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
