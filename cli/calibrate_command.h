#pragma once
// `spmdsim calibrate --machine M OUTPUT...`: the values a spec sheet does not give (the GPU's
// fixed part of a collective, a network hop's latency, the share of the NICs' and scale-up
// links' rate a ring reaches) fitted to nccl-tests or rccl-tests outputs measured on the
// machine, so that `perf`, `run` and `scale` predict other sizes and scales of that machine from
// them. It prints each value documented and fitted and the outputs' |error| before and after,
// and writes the machine file with them (cost_model::MeasuredTiming). The fit itself is
// validation/timing_fit.h; docs/calibrate.md.

#include <ostream>
#include <string>
#include <vector>

#include "cli/cli11_fwd.h"

namespace spmd {

struct CalibrateOptions {
  std::string machine;               // --machine: a GPU preset or a machine file with a fabric
  std::vector<std::string> outputs;  // nccl-tests / rccl-tests outputs measured on it
  std::string op;  // --op: what the outputs that name no test measured; empty: none
  // --fit: the fields to fit (launch_latency, network_latency, network_efficiency,
  // scale_up_efficiency); empty: every field the outputs inform.
  std::vector<std::string> fit;
  std::string output_file;  // --output: the machine file to write; empty: none
};

void add_calibrate_flags(CLI::App& command, CalibrateOptions& options);
int run_calibrate_command(const CalibrateOptions& options, std::ostream& out);

}  // namespace spmd
