#include "backends/plugin/plugin_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <utility>
#include <vector>

#include "backends/plugin/plugin_host.h"
#include "reference/error.h"

namespace spmd::plugin {
namespace {

std::string dl_error_text() {
  const char* text = dlerror();
  return text == nullptr ? "(no reason given)" : text;
}

// The library's handle; dlopen of a name without a slash would search the library path, so the
// file is opened by its absolute path.
void* open_library(const std::string& path) {
  namespace fs = std::filesystem;
  if (!fs::is_regular_file(path)) {
    throw Error(fmt::format("--backend-plugin {}: no such file, expected a shared library (.so) "
                            "built against spmdsim_plugin.h",
                            path));
  }
  void* handle = dlopen(fs::absolute(path).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    throw Error(fmt::format("--backend-plugin {}: cannot load it: {}", path, dl_error_text()));
  }
  return handle;
}

const spmdsim_plugin& plugin_table(void* handle, const std::string& path) {
  dlerror();  // clear any earlier error
  void* symbol = dlsym(handle, SPMDSIM_PLUGIN_ENTRY_POINT);
  if (symbol == nullptr) {
    throw Error(fmt::format("--backend-plugin {}: no function {} in it ({}), expected the plugin "
                            "to export it (extern \"C\", default visibility)",
                            path, SPMDSIM_PLUGIN_ENTRY_POINT, dl_error_text()));
  }
  const auto entry = reinterpret_cast<spmdsim_plugin_entry_fn>(symbol);
  take_error_message();  // clear any stale message on this thread
  const spmdsim_plugin* table = entry(&host_table());
  if (table == nullptr) {
    throw Error(fmt::format("--backend-plugin {}: {} returned NULL: {}", path,
                            SPMDSIM_PLUGIN_ENTRY_POINT, take_error_message()));
  }
  return *table;
}

// Only abi_version is read before it is known to match: the rest of the table may have another
// layout in another version.
void check_abi_version(const spmdsim_plugin& table, const std::string& path) {
  if (table.abi_version != SPMDSIM_PLUGIN_ABI_VERSION) {
    throw Error(fmt::format("--backend-plugin {}: built for plugin ABI version {}, this spmdsim "
                            "speaks version {}; rebuild it against this spmdsim's "
                            "spmdsim_plugin.h",
                            path, table.abi_version, SPMDSIM_PLUGIN_ABI_VERSION));
  }
}

void check_functions(const spmdsim_plugin& table, const std::string& path) {
  if (table.name == nullptr) {
    throw Error(fmt::format("--backend-plugin {}: its table's name is NULL, expected a name",
                            path));
  }
  const std::vector<std::pair<const char*, bool>> functions = {
      {"create_group", table.create_group != nullptr},
      {"destroy_group", table.destroy_group != nullptr},
      {"all_reduce", table.all_reduce != nullptr},
      {"all_gather", table.all_gather != nullptr},
      {"reduce_scatter", table.reduce_scatter != nullptr},
      {"all_to_all", table.all_to_all != nullptr},
      {"permute", table.permute != nullptr},
  };
  for (const auto& [function, present] : functions) {
    if (!present) {
      throw Error(fmt::format("--backend-plugin {}: plugin '{}' has {} = NULL, expected every "
                              "function of struct spmdsim_plugin",
                              path, table.name, function));
    }
  }
}

std::optional<ReductionOrder> native_order(const spmdsim_plugin& table, const std::string& path) {
  if (table.native_order == nullptr) return std::nullopt;
  try {
    return ReductionOrder{.algorithm = reduction_algorithm_from_name(table.native_order)};
  } catch (const Error& e) {
    throw Error(fmt::format("--backend-plugin {}: plugin '{}' native_order: {}", path, table.name,
                            e.what()));
  }
}

}  // namespace

std::shared_ptr<const PluginLibrary> load_plugin_library(const std::string& path) {
  void* handle = open_library(path);  // never closed (see plugin_library.h)
  const spmdsim_plugin& table = plugin_table(handle, path);
  check_abi_version(table, path);
  check_functions(table, path);
  return std::make_shared<const PluginLibrary>(PluginLibrary{.path = path,
                                                             .name = table.name,
                                                             .table = &table,
                                                             .native_order =
                                                                 native_order(table, path)});
}

}  // namespace spmd::plugin
