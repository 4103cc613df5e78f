#include "backends/plugin/plugin_backend.h"

#include "backends/backend_registry.h"
#include "backends/library_backend.h"
#include "backends/plugin/plugin_collectives.h"
#include "backends/plugin/plugin_library.h"

namespace spmd::plugin {

std::string register_plugin_backend(const std::string& path,
                                    std::chrono::milliseconds call_timeout) {
  std::shared_ptr<const PluginLibrary> plugin = load_plugin_library(path);
  const std::string name = "plugin:" + plugin->name;
  register_backend(
      name,
      [plugin, name, call_timeout](const ReductionOrder& order, int device_count) {
        // The order is the plugin's own business; the runner compares with the reference
        // folding in it. Combining is IEEE (plugin_host.cc), so element-wise work is too.
        return std::make_unique<LibraryBackend>(
            name, device_count, std::make_shared<PluginCollectives>(plugin, call_timeout),
            order.numerics());
      },
      plugin->native_order);
  return name;
}

}  // namespace spmd::plugin
