#include "backends/backend_registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "backends/sim_backend.h"
#include "reference/reference_backend.h"

namespace spmd {
namespace {

struct RegisteredBackend {
  BackendFactory factory;
  std::optional<ReductionOrder> native_order;
};

std::map<std::string, RegisteredBackend>& registry() {
  static std::map<std::string, RegisteredBackend> backends = {
      {"reference",
       {[](const ReductionOrder& order, int device_count) -> std::unique_ptr<Backend> {
          return std::make_unique<ReferenceBackend>(order, device_count);
        }}},
      {"sim",
       {[](const ReductionOrder& order, int device_count) -> std::unique_ptr<Backend> {
          return make_sim_backend(order, device_count, "ring");
        }}},
  };
  return backends;
}

}  // namespace

void register_backend(const std::string& name, BackendFactory factory,
                      std::optional<ReductionOrder> native_order) {
  registry()[name] = {std::move(factory), std::move(native_order)};
}

std::optional<ReductionOrder> backend_native_order(const std::string& name) {
  check_backend_name(name);
  return registry().at(name).native_order;
}

void check_backend_name(const std::string& name) {
  if (!registry().contains(name)) {
    throw Error(fmt::format("--backend {} is not known, expected one of: {}", name,
                            fmt::join(backend_names(), ", ")));
  }
}

std::unique_ptr<Backend> make_backend(const std::string& name, const ReductionOrder& order,
                                      int device_count) {
  check_backend_name(name);
  return registry().at(name).factory(order, device_count);
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry()) names.push_back(name);
  return names;
}

}  // namespace spmd
