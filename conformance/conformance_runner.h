#pragma once
// Runs conformance cases on a backend and compares bit for bit (NaN payloads aside).

#include <optional>
#include <string>
#include <vector>

#include "conformance/conformance_case.h"
#include "reference/reduction_order.h"

namespace spmd::conformance {

struct RunOptions {
  std::string backend = "reference";
  // The order the backend folds float sums in; the case's own order when not given.
  std::optional<ReductionOrder> order;
};

struct CaseResult {
  std::string name;
  bool passed = false;
  std::string failure;             // one line: the first difference, or the unexpected error
  std::vector<std::string> notes;  // one line each: how the comparison was made, when unusual
  // The case's or the run's order is unspecified (in_switch): bits are compared only on data
  // whose reductions are exact in any order (conformance/unspecified_order.h).
  bool order_unspecified = false;
  // One line, naming the case's file, the order field and its value: why the case cannot be
  // judged at all (in an unspecified order, data whose bits are not defined). Not run then.
  std::string error;
};

// Runs `c` and compares; passed when neither failure nor error is set.
CaseResult run_case(const Case& c, const RunOptions& options);

// Every NAME.json under the given files and folders (recursively), sorted; spmd::Error for a
// path that does not exist.
std::vector<std::string> find_case_files(const std::vector<std::string>& paths);

}  // namespace spmd::conformance
