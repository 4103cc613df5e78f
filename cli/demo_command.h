#pragma once
// `spmdsim` and `spmdsim demo`: the tutorials' data-parallel MLP training with pmap on 8
// simulated devices of a ring, checked against the reference backend, with its costs, and a
// trace and reports written to a folder.

#include <ostream>
#include <string>

namespace spmd {

struct DemoOptions {
  std::string out_folder = "spmdsim-out/demo";
  int steps = 20;
  std::string placement = "auto";  // where the 8 mesh devices lie on the ring
};

// 0 when every replica agrees and equals the reference bit for bit; 1 otherwise.
int run_demo_command(const DemoOptions& options, std::ostream& out);

}  // namespace spmd
