#pragma once
// A plugin as a backend by name (backend_registry.h), for `spmdsim conform --backend-plugin
// PATH`: its five operations (plugin_collectives.h) inside a LibraryBackend, which does JAX's
// layout around them, with the plugin's native reduction order.

#include <chrono>
#include <string>

namespace spmd::plugin {

// How long every rank of one plugin operation has to return, unless the user says otherwise.
inline constexpr std::chrono::seconds kDefaultCallTimeout{60};

// Loads the plugin at `path` (plugin_library.h) and registers it; returns the backend's name,
// "plugin:" and the plugin's own name. Throws spmd::Error when the plugin cannot be loaded.
std::string register_plugin_backend(const std::string& path,
                                    std::chrono::milliseconds call_timeout = kDefaultCallTimeout);

}  // namespace spmd::plugin
