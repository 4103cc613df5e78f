#pragma once
// A collective library plugin (spmdsim_plugin.h), loaded from its shared library and checked:
// the file exists and loads, exports the entry point, speaks this spmdsim's ABI version, fills
// every function and names a known reduction order.

#include <memory>
#include <optional>
#include <string>

#include "backends/plugin/spmdsim_plugin.h"
#include "reference/reduction_order.h"

namespace spmd::plugin {

struct PluginLibrary {
  std::string path;                          // as the user gave it, for messages
  std::string name;                          // the plugin's own name (its table's)
  const spmdsim_plugin* table = nullptr;     // every function non-NULL
  std::optional<ReductionOrder> native_order;  // from the table's native_order
};

// Loads the plugin at `path`. The library is never unloaded: a call abandoned after a timeout
// may still be running its code when the process exits. Throws spmd::Error, one line naming the
// path and what is wrong (dlerror's text when the loader refuses the file).
std::shared_ptr<const PluginLibrary> load_plugin_library(const std::string& path);

}  // namespace spmd::plugin
