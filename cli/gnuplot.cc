#include "cli/gnuplot.h"

#include <fmt/format.h>

#include <cstdlib>

#include "reference/error.h"

namespace spmd {
namespace {

// For sh: in single quotes, each ' written as '\''.
std::string shell_quoted(std::string_view text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string(R"('\'')") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

bool gnuplot_on_path() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

std::string gnuplot_quoted(std::string_view text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  return quoted + "'";
}

void run_gnuplot(const std::filesystem::path& script, std::string_view how_to_skip) {
  const std::string command = "gnuplot " + shell_quoted(script.string());
  if (std::system(command.c_str()) != 0) {
    throw Error(fmt::format("plot: `{}` failed, expected gnuplot (Debian gnuplot-nox) on PATH; {}",
                            command, how_to_skip));
  }
}

}  // namespace spmd
