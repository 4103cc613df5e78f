#include "reference/pending_collective.h"

#include <fmt/format.h>

#include "reference/context.h"
#include "reference/error.h"

namespace spmd {

std::string StartedCall::text() const {
  return call.to_string() + " of " + std::string(dtype_name(dtype)) + shape_string(shape);
}

PendingCollective::PendingCollective(PendingCollective&& other) noexcept
    : context_(std::exchange(other.context_, nullptr)),
      ticket_(other.ticket_),
      what_(std::move(other.what_)),
      state_(std::exchange(other.state_, State::empty)) {}

PendingCollective& PendingCollective::operator=(PendingCollective&& other) noexcept {
  if (this != &other) {
    drop();  // assigning over an unwaited handle drops it
    context_ = std::exchange(other.context_, nullptr);
    ticket_ = other.ticket_;
    what_ = std::move(other.what_);
    state_ = std::exchange(other.state_, State::empty);
  }
  return *this;
}

PendingCollective::~PendingCollective() { drop(); }

void PendingCollective::drop() noexcept {
  if (state_ == State::pending && context_ != nullptr) context_->abandon(ticket_, what());
  state_ = State::empty;
}

Array PendingCollective::wait() {
  switch (state_) {
    case State::empty:
      throw Error(
          "PendingCollective::wait: the handle holds no collective (default-constructed or "
          "moved from); expected a handle from a *_start call");
    case State::waited:
      throw Error(fmt::format("PendingCollective::wait: {} on device {} was already waited; "
                              "expected one wait per start",
                              what(), context_->device()));
    case State::pending: break;
  }
  return context_->finish_wait(*this);
}

}  // namespace spmd
