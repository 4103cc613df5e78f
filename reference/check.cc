#include "reference/check.h"

#include <fmt/format.h>

namespace spmd::check_detail {
namespace {

// __FILE__ is the path the compiler was given (absolute under CMake; relative to a build folder
// in the project, "../tests/x.cc", where ccache's base_dir rewrites it); the message names the
// file from the project root, the same on every checkout.
std::string_view project_relative(std::string_view file) {
  constexpr std::string_view kSourceDir = SPMD_CHECK_SOURCE_DIR "/";
  if (file.starts_with(kSourceDir)) file.remove_prefix(kSourceDir.size());
  while (file.starts_with("../")) file.remove_prefix(3);
  return file;
}

}  // namespace

void fail(std::string_view file, int line, std::string_view condition, std::string_view message) {
  throw InternalError(
      fmt::format("{}:{}: check failed: {}: {}", project_relative(file), line, condition, message));
}

}  // namespace spmd::check_detail
