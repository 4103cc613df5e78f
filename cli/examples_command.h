#pragma once
// `spmdsim examples [NAME] [--list]`: the JAX tutorial examples of docs/examples.md run on the
// reference backend, printing their results. Without NAME, every example in order; each one's
// output is stored in examples/expected/NAME.txt and checked byte for byte by CTest.

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli11_fwd.h"

namespace spmd {

struct ExamplesOptions {
  std::string name;   // empty: all of them
  bool list = false;  // print the names and what each shows instead
};

void add_examples_flags(CLI::App& command, ExamplesOptions& options);

// The examples' names, in the order `spmdsim examples` runs them.
std::vector<std::string_view> example_names();

// spmd::Error for an unknown name, naming the known ones.
int run_examples_command(std::ostream& out, const ExamplesOptions& options = {});

}  // namespace spmd
