#include "cli/conform_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <optional>

#include "backends/backend_registry.h"
#include "backends/plugin/plugin_backend.h"
#include "backends/plugin/plugin_collectives.h"
#include "backends/sim_backend.h"
#include "cli/conform_backends.h"
#include "conformance/conformance_runner.h"
#include "reference/error.h"
#include "reference/jax_version.h"

namespace spmd {

void add_conform_flags(CLI::App& command, ConformOptions& options) {
  command.add_option("--backend", options.backend,
                     "Backend to run the cases on: reference, sim, gloo, and cuda / nccl where "
                     "built")
      ->default_val("reference");
  CLI::Option* plugin =
      command.add_option("--backend-plugin", options.backend_plugin,
                         "A collective library plugin (a .so built against spmdsim_plugin.h) to "
                         "run the cases on instead of --backend; its native order unless --order");
  command
      .add_option("--plugin-timeout-s", options.plugin_timeout_s,
                  "With --backend-plugin: seconds every rank of one operation has to return")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 86400.0))  // a millisecond to a day
      ->needs(plugin);
  command.add_option("--order", options.order,
                     "Reduction order the backend folds float sums in (xla_cpu, nccl_ring, "
                     "gloo_ring, mpi_ring, mpi_recursive_doubling, ...; in_switch: unspecified, "
                     "cases checked only where every order gives the same bits); default: each "
                     "case's");
  command
      .add_option("--ring", options.ring,
                  "With --order: the mesh's device ids in ring order, e.g. 0,2,1,3; each group "
                  "folds along it restricted to its members (every case's mesh must have that "
                  "many devices)")
      ->delimiter(',');
  command.add_option("--algorithm", options.algorithm,
                     "With --backend sim: the collective algorithm (direct, ring, "
                     "bidirectional_ring, halving_doubling, binary_tree, double_binary_tree); "
                     "results are compared with the reference folding in its order");
  command
      .add_option("--topology", options.topology,
                  "With --backend sim: ring, ring-uni, torus[:AxB[xC]], mesh[:AxB[xC]], "
                  "fully_connected, switch or hierarchical:K")
      ->default_val("ring");
  command
      .add_option("--jax-version", options.jax_version,
                  "The JAX release whose rules the reference follows where 0.10 and 0.12 "
                  "differ (docs/jax-differences.md), for cases that do not state their own "
                  "jax_version: 0.12 or 0.10")
      ->capture_default_str();
  command.add_flag("--verbose,-v", options.verbose, "Print a line for passing cases too");
  command.add_option("PATH", options.paths, "Case files (NAME.json) or folders of cases")
      ->required();
}

namespace {

// --topology is checked before any case says its device count: it must name a topology for some
// count a conformance case can have, else the error is the one for 8 devices.
void check_topology_for_cases(const std::string& text) {
  constexpr int kMostCaseDevices = 1024;
  for (int devices = 1; devices <= kMostCaseDevices; ++devices) {
    try {
      topology::topology_from_text(text, devices);
      return;
    } catch (const Error&) {
      // Try the next count.
    }
  }
  topology::topology_from_text(text, 8);  // throws its message
}

// --order with its --ring: the ring lists device ids, so it must be a permutation of 0..n-1.
ReductionOrder order_from_flags(const ConformOptions& options) {
  ReductionOrder order{.algorithm = reduction_algorithm_from_name(options.order)};
  for (const std::string& device : options.ring) {
    try {
      order.ring.push_back(std::stoi(device));
    } catch (const std::exception&) {
      throw Error(
          fmt::format("--ring {}: expected comma-separated device ids such as 0,2,1,3", device));
    }
  }
  try {
    order.check_device_ring(static_cast<int>(order.ring.size()));
  } catch (const Error& e) {
    throw Error(fmt::format("--ring: {}", e.what()));
  }
  return order;
}

// A case file, loaded, or the one-line reason the format cannot read it.
struct LoadedCase {
  std::string file;
  std::optional<conformance::Case> loaded;
  std::string malformed;
};

std::vector<LoadedCase> load_cases(const std::vector<std::string>& paths,
                                   JaxVersion jax_version) {
  std::vector<LoadedCase> cases;
  for (const std::string& file : conformance::find_case_files(paths)) {
    LoadedCase entry{.file = file};
    try {
      entry.loaded = conformance::load_case(file, jax_version);
    } catch (const Error& e) {
      entry.malformed = e.what();
    }
    cases.push_back(std::move(entry));
  }
  return cases;
}

// A --ring lists every device of the mesh: checked for every case before any runs.
void check_ring_fits_cases(const std::vector<int>& ring, const std::vector<LoadedCase>& cases) {
  if (ring.empty()) return;
  for (const LoadedCase& entry : cases) {
    if (!entry.loaded || entry.loaded->device_count == static_cast<int>(ring.size())) continue;
    throw Error(fmt::format(
        "{}: the case's mesh has {} devices, --ring {} lists {}; expected a ring of all {} "
        "devices",
        entry.file, entry.loaded->device_count, fmt::join(ring, ","), ring.size(),
        entry.loaded->device_count));
  }
}

// The backend is made once, for the smallest case, before any case runs: a backend that cannot
// start here (no GPU, an order it has no algorithm for) is one error rather than a failure per
// case.
void check_backend_starts(const std::string& backend, const std::optional<ReductionOrder>& order,
                          const std::vector<LoadedCase>& cases) {
  std::optional<int> fewest_devices;
  for (const LoadedCase& entry : cases) {
    if (!entry.loaded) continue;
    fewest_devices = std::min(fewest_devices.value_or(entry.loaded->device_count),
                              entry.loaded->device_count);
  }
  if (fewest_devices) make_backend(backend, order.value_or(ReductionOrder{}), *fewest_devices);
}

// --backend-plugin: the plugin loaded and registered, its backend's name in `backend`.
ConformOptions with_plugin_backend(ConformOptions options) {
  if (options.backend_plugin.empty()) return options;
  if (options.backend != "reference") {
    throw Error(fmt::format("--backend-plugin {} with --backend {}, expected one of the two",
                            options.backend_plugin, options.backend));
  }
  options.backend = plugin::register_plugin_backend(
      options.backend_plugin, std::chrono::milliseconds(static_cast<std::int64_t>(
                                  options.plugin_timeout_s * 1000)));
  return options;
}

JaxVersion jax_version_from_flag(const std::string& text) {
  try {
    return jax_version_from_name(text);
  } catch (const Error& e) {
    throw Error(fmt::format("--jax-version: {}", e.what()));
  }
}

// A plugin call that fails or hangs ends the run with its message (exit code 2), not one case.
conformance::CaseResult run_case_or_stop_on_plugin_error(const conformance::Case& c,
                                                         const conformance::RunOptions& options) {
  try {
    return conformance::run_case(c, options);
  } catch (const plugin::PluginError& e) {
    throw Error(e.what());
  }
}

}  // namespace

int run_conform_command(const ConformOptions& given_options, std::ostream& out) {
  const JaxVersion jax_version = jax_version_from_flag(given_options.jax_version);
  const ConformOptions options = with_plugin_backend(given_options);
  conformance::RunOptions run_options{.backend = options.backend};
  register_conform_backends();
  check_backend_name(options.backend);  // fail early on an unknown backend
  if (options.backend == "sim") {
    check_topology_for_cases(options.topology);  // fail early on a malformed topology
    register_backend("sim",
                     [topology = options.topology](const ReductionOrder& order, int device_count) {
                       return make_sim_backend(order, device_count, topology);
                     });
  } else if (!options.algorithm.empty() || options.topology != "ring") {
    throw Error(fmt::format(
        "--algorithm / --topology with --backend {}, expected them only with --backend sim",
        options.backend));
  }
  if (!options.algorithm.empty()) {
    if (!options.order.empty()) {
      throw Error(fmt::format("--algorithm {} with --order {}, expected one of the two",
                              options.algorithm, options.order));
    }
    run_options.order = order_for_algorithm(collectives::algorithm_from_name(options.algorithm));
  }
  if (!options.ring.empty() && options.order.empty()) {
    throw Error(fmt::format("--ring {} without --order, expected --order with it",
                            fmt::join(options.ring, ",")));
  }
  if (!options.order.empty()) run_options.order = order_from_flags(options);
  if (!run_options.order) run_options.order = backend_native_order(options.backend);
  const std::vector<LoadedCase> cases = load_cases(options.paths, jax_version);
  if (run_options.order) check_ring_fits_cases(run_options.order->ring, cases);
  check_backend_starts(options.backend, run_options.order, cases);
  int passed = 0, failed = 0, errors = 0, order_unspecified = 0;
  for (const LoadedCase& entry : cases) {
    if (!entry.loaded) {
      out << "ERROR " << entry.malformed << "\n";
      ++errors;
      continue;
    }
    const conformance::CaseResult result =
        run_case_or_stop_on_plugin_error(*entry.loaded, run_options);
    // A case whose bits are not defined (in an unspecified order) is bad input, as a malformed
    // file is.
    if (!result.error.empty()) {
      out << "ERROR " << result.error << "\n";
      ++errors;
      continue;
    }
    order_unspecified += result.order_unspecified ? 1 : 0;
    const std::string label =
        result.order_unspecified ? result.name + " (order unspecified)" : result.name;
    if (result.passed) {
      ++passed;
      if (options.verbose) out << "PASS " << label << "\n";
    } else {
      ++failed;
      out << "FAIL " << label << ": " << result.failure << "\n";
    }
    if (options.verbose || !result.passed) {
      for (const std::string& note : result.notes) out << "  note: " << note << "\n";
    }
  }
  if (order_unspecified > 0) {
    out << "order unspecified in " << order_unspecified
        << " case(s): bits compared only on data whose reductions are exact in every order\n";
  }
  out << passed << " passed, " << failed + errors << " failed\n";
  if (errors > 0) return 2;
  return failed == 0 ? 0 : 1;
}

}  // namespace spmd
