#pragma once
// `spmdsim validate` on a file of published training runs (docs/validation.md, "Training
// steps"): every row predicted by the training model (training/), printed beside its published
// step time per source and per GPU with tokens/s per GPU and MFU, the median, p90 and share
// within 10% of |error|, the rows not predicted and why; --summary prints the markdown tables.

#include <ostream>

#include "cli/validate_command.h"
#include "support/csv_table.h"

namespace spmd {

// 0, or 1 when the overall median or p90 of |error| is above its limit (one line on `err`).
int run_training_validate(const CsvTable& table, const ValidateOptions& options, std::ostream& out,
                          std::ostream& err);

}  // namespace spmd
