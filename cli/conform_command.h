#pragma once
// `spmdsim conform [--backend NAME | --backend-plugin LIB.so [--plugin-timeout-s S]]
//  [--order ORDER | --algorithm ALGORITHM] [--topology T] [--jax-version 0.10|0.12] [--verbose]
//  PATH...`

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "backends/plugin/plugin_backend.h"
#include "cli/cli11_fwd.h"

namespace spmd {

struct ConformOptions {
  std::string backend = "reference";
  std::string backend_plugin;     // a collective library plugin (.so) instead of --backend
  // --backend-plugin: seconds every rank of one operation has to return.
  double plugin_timeout_s = std::chrono::duration<double>(plugin::kDefaultCallTimeout).count();
  std::string order;              // empty: each case's own order
  std::vector<std::string> ring;  // --ring 0,2,1,3: the mesh's device ids in ring order
  std::string algorithm;          // --backend sim: the simulator algorithm (sets the order)
  std::string topology = "ring";  // --backend sim: the machine's topology
  // --jax-version: the JAX release whose rules cases that state none run with
  // (reference/jax_version.h); a case's own `jax_version` wins.
  std::string jax_version = "0.12";
  bool verbose = false;
  std::vector<std::string> paths;
};

void add_conform_flags(CLI::App& command, ConformOptions& options);

// Loads every case, then runs them; prints one line per failing case, a line counting the cases
// run in an unspecified order (in_switch) when there are any, and a final "N passed, M failed";
// returns the exit code (0 when none failed, 1 otherwise, 2 when a case file is malformed or a
// case in an unspecified order has data whose bits are not defined: both are ERROR lines).
// Throws spmd::Error for bad flags, a plugin that cannot be loaded or whose call fails or hangs,
// and, before any case runs, for a --ring whose length is not a case's device count.
int run_conform_command(const ConformOptions& options, std::ostream& out);

}  // namespace spmd
