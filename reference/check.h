#pragma once
// Invariant checks that stay on in every build (the release builds define NDEBUG, which compiles
// assert out):
//   SPMD_CHECK(free_at_ps >= previous_ps, fmt::format("link {} went back", link));
// throws spmd::InternalError "file:line: check failed: <condition>: <message>" when the condition
// is false. The message expression is evaluated only then, so it may format freely.
//   SPMD_UNREACHABLE(message) throws the same for code that cannot be reached (a switch over
// every enum value), and tells the compiler so.
//
// InternalError is a bug in spmdsim, never bad input: it is deliberately not an spmd::Error
// (reference/error.h), so handlers of user errors let it through. The CLI prints it as one line
// "spmdsim: internal error: ..." and exits with code 3.

#include <stdexcept>
#include <string>
#include <string_view>

namespace spmd {

class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& message) : std::logic_error(message) {}
};

namespace check_detail {

// Out of line so that each check costs a compare and a branch where it stands.
[[noreturn]] void fail(std::string_view file, int line, std::string_view condition,
                       std::string_view message);

}  // namespace check_detail
}  // namespace spmd

#define SPMD_CHECK(condition, message)                                       \
  do {                                                                       \
    if (!(condition)) [[unlikely]] {                                         \
      ::spmd::check_detail::fail(__FILE__, __LINE__, #condition, (message)); \
    }                                                                        \
  } while (false)

#define SPMD_UNREACHABLE(message) \
  ::spmd::check_detail::fail(__FILE__, __LINE__, "unreachable", (message))
