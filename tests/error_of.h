#pragma once
// The message of the spmd::Error a piece of code throws, for tests of error texts. Every error
// the project raises is one line (DEVELOPERS.md), so a message with a newline fails the test too.

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "reference/error.h"

namespace spmd::test_errors {

// A test failure if `f` throws no spmd::Error or if the message is not one line.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  ADD_FAILURE() << "expected an spmd::Error";
  return "";
}

}  // namespace spmd::test_errors
