#include "cli/conform_command.h"

#include <fmt/format.h>

#include <iostream>

#include "backends/backend_registry.h"
#include "backends/sim_backend.h"
#include "conformance/conformance_runner.h"
#include "reference/error.h"

namespace spmd {

void add_conform_flags(CLI::App& command, ConformOptions& options) {
  command.add_option("--backend", options.backend, "Backend to run the cases on")
      ->default_val("reference");
  command.add_option("--order", options.order,
                     "Reduction order the backend folds float sums in (xla_cpu, nccl_ring, "
                     "gloo_ring, mpi_ring, mpi_recursive_doubling, ...); default: each case's");
  command.add_option("--ring", options.ring, "Ring order for ring algorithms, e.g. 0,2,1,3")
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

}  // namespace

int run_conform_command(const ConformOptions& options, std::ostream& out) {
  conformance::RunOptions run_options{.backend = options.backend};
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
  if (!options.order.empty()) {
    ReductionOrder order{.algorithm = reduction_algorithm_from_name(options.order)};
    for (const std::string& position : options.ring) {
      try {
        order.ring.push_back(std::stoi(position));
      } catch (const std::exception&) {
        throw Error(
            fmt::format("--ring {}: expected comma-separated integers such as 0,2,1,3", position));
      }
    }
    run_options.order = order;
  }
  int passed = 0, failed = 0, malformed = 0;
  for (const std::string& file : conformance::find_case_files(options.paths)) {
    conformance::Case c;
    try {
      c = conformance::load_case(file);
    } catch (const Error& e) {
      out << "ERROR " << e.what() << "\n";
      ++malformed;
      continue;
    }
    const conformance::CaseResult result = conformance::run_case(c, run_options);
    if (result.passed) {
      ++passed;
      if (options.verbose) out << "PASS " << result.name << "\n";
    } else {
      ++failed;
      out << "FAIL " << result.name << ": " << result.failure << "\n";
    }
    if (options.verbose || !result.passed) {
      for (const std::string& note : result.notes) out << "  note: " << note << "\n";
    }
  }
  out << passed << " passed, " << failed + malformed << " failed\n";
  if (malformed > 0) return 2;
  return failed == 0 ? 0 : 1;
}

}  // namespace spmd
