#pragma once
// `spmdsim examples` (and `spmdsim` with no arguments, until the demo replaces it): the worked
// examples of the JAX tutorials listed in docs/examples.md run on the reference backend, printing
// their results.

#include <ostream>

namespace spmd {

int run_examples_command(std::ostream& out);

}  // namespace spmd
