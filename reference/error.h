#pragma once
// spmd::Error: bad input from a user (a spec, a shape, a file). Its message is one line naming the
// field, the value and what was expected. The CLI prints it and exits with code 2.

#include <stdexcept>
#include <string>

namespace spmd {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A program whose devices disagree about the collectives they call, or that waits forever.
class DeadlockError : public Error {
 public:
  using Error::Error;
};

}  // namespace spmd
