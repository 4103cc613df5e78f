#pragma once
// `spmdsim perf`: one collective at a range of sizes on a simulated machine, printed with the
// columns and units of nccl-tests (size, count, type, redop, root, time (us), algbw and busbw
// (GB/s)), to set beside a real measurement; `--compare` reads that measurement (an nccl-tests
// or rccl-tests output) and prints its time and the error beside each prediction.

#include <ostream>
#include <string>

#include "cli/cli11_fwd.h"
#include "cli/machine_flags.h"
#include "cost_model/collective_timing.h"
#include "validation/error_summary.h"

namespace spmd {

struct PerfOptions {
  std::string op = "all_reduce";
  MachineFlags machine;
  std::string min_bytes = "8";       // -b
  std::string max_bytes = "128MiB";  // -e
  std::int64_t step_factor = 2;      // -f
  std::string dtype = "float32";     // -d
  bool cost_only = false;
  std::string placement = "auto";
  // --compare: an nccl-tests output, whose sizes, op and ranks the run takes and whose times it
  // prints beside its own. Empty: none.
  std::string compare;
  ErrorLimits limits;  // over --compare's sizes
  // --op, to tell whether the command line gave it. Null for callers without flags.
  const CLI::Option* op_option = nullptr;
};

// The collective timing's op for one of perf's op names (all_reduce, all_gather,
// reduce_scatter, all_to_all, ppermute, broadcast); spmd::Error "--op NAME: ..." for another.
cost_model::TimedOp timed_op_of_perf_op(const std::string& op);

void add_perf_flags(CLI::App& command, PerfOptions& options);
// 0, or 1 when --compare's median or p90 of |error| is above its limit (one line on stderr).
int run_perf_command(const PerfOptions& options, std::ostream& out);

}  // namespace spmd
