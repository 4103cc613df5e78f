#include "tools/examples_command.h"

namespace spmd {

int run_examples_command(std::ostream& out) {
  out << "spmdsim examples: (being written)\n";
  return 0;
}

}  // namespace spmd
