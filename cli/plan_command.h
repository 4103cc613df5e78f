#pragma once
// `spmdsim plan --model FILE --machine PRESET --devices N[,M,...]`: the layouts the frameworks
// allow for a model on a machine, each predicted by the training model, ranked by tokens/s
// (training/layout_search.h; docs/plan.md). `--machines a,b:PRICE` compares machines, with the
// cost of a million tokens where a price per GPU-hour is given.

#include <ostream>
#include <string>
#include <vector>

#include "cli/cli11_fwd.h"

namespace spmd {

struct PlanOptions {
  std::string model;
  std::string machine;                // one preset
  std::vector<std::string> machines;  // PRESET or PRESET:PRICE_PER_GPU_HOUR
  std::vector<int> devices;
  int top = 10;
  unsigned threads = 0;  // 0: the hardware's
  std::string json;      // a file for the whole table
};

void add_plan_flags(CLI::App& command, PlanOptions& options);
int run_plan_command(const PlanOptions& options, std::ostream& out);

}  // namespace spmd
