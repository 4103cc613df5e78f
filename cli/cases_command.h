#pragma once
// `spmdsim cases --order ORDER|all --out DIR [--seed N] [--ring 0,2,1,3] [--nccl-chunk-bytes B]
//  [--gloo-max-segment-bytes B] [--torus-dims 2,3]`: writes order-sensitive conformance cases
// (docs/conformance-format.md, "Order cases").

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "cli/cli11_fwd.h"

namespace spmd {

struct CasesOptions {
  std::string order;  // an algorithm name or "all"
  std::string out_folder;
  std::uint64_t seed = 1;
  std::vector<int> ring;
  std::int64_t nccl_chunk_bytes = 0;        // 0: the public set's
  std::int64_t gloo_max_segment_bytes = 0;  // 0: the public set's
  std::vector<int> torus_dims;
};

void add_cases_flags(CLI::App& command, CasesOptions& options);

// Prints one line per case written (and the wrong orders no data can tell apart); returns 0.
int run_cases_command(const CasesOptions& options, std::ostream& out);

}  // namespace spmd
