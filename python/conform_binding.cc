// conform_cases: conformance cases (docs/conformance-format.md) run on the reference or the
// simulator and compared bit for bit, as `spmdsim conform` does, for spmdsim.conform.

#include <fmt/format.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "backends/backend_registry.h"
#include "backends/sim_backend.h"
#include "collectives/algorithm.h"
#include "conformance/conformance_case.h"
#include "conformance/conformance_runner.h"
#include "python/bindings.h"
#include "reference/error.h"
#include "reference/jax_version.h"
#include "reference/reduction_order.h"

namespace nb = nanobind;

namespace spmd::python {
namespace {

// The backends a Python caller can name: those that need no library beside the module.
void check_backend(const std::string& backend) {
  if (backend != "reference" && backend != "sim") {
    throw Error(fmt::format("backend: '{}', expected 'reference' or 'sim'", backend));
  }
}

// The order the backend folds in: `algorithm` (sim only) names a simulator algorithm and its
// order; `order` an order; neither: each case's own.
std::optional<ReductionOrder> run_order(const std::string& backend,
                                        const std::optional<std::string>& order,
                                        const std::optional<std::string>& algorithm) {
  if (algorithm && order) {
    throw Error(fmt::format("algorithm: '{}' with order '{}', expected one of the two",
                            *algorithm, *order));
  }
  if (algorithm) {
    if (backend != "sim") {
      throw Error(fmt::format("algorithm: '{}' with backend '{}', expected backend 'sim'",
                              *algorithm, backend));
    }
    try {
      return order_for_algorithm(collectives::algorithm_from_name(*algorithm));
    } catch (const Error& e) {
      throw Error(fmt::format("algorithm: {}", e.what()));
    }
  }
  if (!order) return std::nullopt;
  try {
    return ReductionOrder{.algorithm = reduction_algorithm_from_name(*order)};
  } catch (const Error& e) {
    throw Error(fmt::format("order: {}", e.what()));
  }
}

nb::dict result_dict(const std::string& file, const conformance::CaseResult& result) {
  nb::dict entry;
  entry["file"] = file;
  entry["name"] = result.name;
  entry["passed"] = result.passed;
  entry["failure"] = result.failure;
  entry["error"] = result.error;
  entry["notes"] = result.notes;
  entry["order_unspecified"] = result.order_unspecified;
  return entry;
}

// Every case under `paths`, one dict each; a case the format cannot read is an entry with
// `error` set (as `spmdsim conform` prints ERROR and goes on).
std::vector<nb::dict> conform_cases(const std::vector<std::string>& paths,
                                    const std::string& backend,
                                    const std::optional<std::string>& order,
                                    const std::optional<std::string>& algorithm,
                                    const std::string& topology,
                                    const std::string& jax_version_name) {
  check_backend(backend);
  JaxVersion jax_version = kDefaultJaxVersion;
  try {
    jax_version = jax_version_from_name(jax_version_name);
  } catch (const Error& e) {
    throw Error(fmt::format("jax_version: {}", e.what()));
  }
  conformance::RunOptions options{.backend = backend, .order = run_order(backend, order, algorithm)};
  if (backend == "sim") {
    register_backend("sim", [topology](const ReductionOrder& fold, int device_count) {
      return make_sim_backend(fold, device_count, topology);
    });
  }
  std::vector<nb::dict> results;
  for (const std::string& file : conformance::find_case_files(paths)) {
    try {
      results.push_back(result_dict(file, conformance::run_case(
                                              conformance::load_case(file, jax_version), options)));
    } catch (const Error& e) {
      conformance::CaseResult unreadable{.error = e.what()};
      results.push_back(result_dict(file, unreadable));
    }
  }
  return results;
}

}  // namespace

void bind_conform(nb::module_& module) {
  module.def("conform_cases", &conform_cases, nb::arg("paths"), nb::arg("backend"),
             nb::arg("order").none(), nb::arg("algorithm").none(), nb::arg("topology"),
             nb::arg("jax_version"),
             "Runs every conformance case under the paths, under the rules of the JAX version "
             "each case states, else jax_version's; one dict per case file.");
}

}  // namespace spmd::python
