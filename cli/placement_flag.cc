#include "cli/placement_flag.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace spmd {

void add_placement_flag(CLI::App& command, std::string& placement) {
  command
      .add_option(
          "--placement", placement,
          fmt::format("Where the mesh lies on the machine's devices: {}", sim::placement_syntax()))
      ->capture_default_str();
}

sim::PlacementSpec placement_from_flag(const std::string& placement) {
  return sim::placement_from_text(placement, "--placement");
}

}  // namespace spmd
