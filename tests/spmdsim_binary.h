#pragma once
// Runs the spmdsim binary (SPMDSIM_BINARY, set by tests/CMakeLists.txt) as a user would, for the
// tests that check the command line's output and exit codes.

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace spmd {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// `arguments` go through the shell, after the binary's path.
inline CommandResult run_binary(const std::string& arguments) {
  const std::string command = std::string(SPMDSIM_BINARY) + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  CommandResult result;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) result.output += buffer;
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace spmd
