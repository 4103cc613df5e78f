#pragma once
// Errors a simulated run can end with, besides bad input (spmd::Error) and deadlock
// (spmd::DeadlockError, reference/error.h).

#include "reference/error.h"

namespace spmd::sim {

class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

}  // namespace spmd::sim
