#pragma once
// Machines by name, usable wherever a machine file is (`--machine dgx-h100`), each at its own
// device count or another (`--machine hgx-h100 -n 32`: four nodes). Every number and its public
// source is in docs/machine-presets.md.

#include <optional>
#include <string>
#include <vector>

#include "sim/machine_spec.h"

namespace spmd {

std::vector<std::string> machine_preset_names();  // in a fixed order
// The preset of that name at its own device count, if there is one.
std::optional<sim::MachineSpec> machine_preset(const std::string& name);
// The preset of that name with `devices` devices. A GPU machine takes part of one node (at most
// its devices per node) or whole nodes (a multiple of them, joined by their NICs); a TPU takes a
// power-of-two slice of its pod, as near a cube (3D torus) or a square (2D) as it can be. At the
// preset's own count this is machine_preset(name). spmd::Error naming the preset, the count and
// what it takes otherwise, and for a name that is no preset.
sim::MachineSpec machine_preset_with_devices(const std::string& name, int devices);
// A preset's name gives that preset; anything else is read as a machine file. spmd::Error
// naming the text, the presets and the file's problem otherwise.
sim::MachineSpec machine_from_name_or_file(const std::string& name_or_path);

}  // namespace spmd
