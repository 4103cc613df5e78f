#pragma once
// Machines by name, usable wherever a machine file is (`--machine dgx-h100`). Every number and
// its public source is in docs/machine-presets.md.

#include <optional>
#include <string>
#include <vector>

#include "sim/machine_spec.h"

namespace spmd {

std::vector<std::string> machine_preset_names();  // in a fixed order
// The preset of that name, if there is one.
std::optional<sim::MachineSpec> machine_preset(const std::string& name);
// A preset's name gives that preset; anything else is read as a machine file. spmd::Error
// naming the text, the presets and the file's problem otherwise.
sim::MachineSpec machine_from_name_or_file(const std::string& name_or_path);

}  // namespace spmd
