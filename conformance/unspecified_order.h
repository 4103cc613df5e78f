#pragma once
// Conformance in a reduction order nobody documents (in_switch, reference/reduction_order.h):
// such a case's bits are defined only where every reduction it makes gives the same bits in any
// order (reference/exact_in_any_order.h); the runner refuses a case whose data do not, and says
// "order unspecified" for the others. See docs/reduction-orders.md, "In-switch reductions".

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "conformance/conformance_case.h"
#include "reference/fold_reduce.h"
#include "reference/reduction_order.h"

namespace spmd::conformance {

// One element of one reduction whose bits depend on the order.
struct InexactReduction {
  std::string collective;  // "psum('i')", as the call prints
  ReduceOp op = ReduceOp::sum;
  std::vector<int> devices;  // the group, in rank order
  std::int64_t element = 0;  // flat index into one contribution
};

// The first reduction of `c`'s program, run on the reference folding in `order`, that is not
// exact in any order: every group of every psum, pmean, psum_scatter, pmax and pmin is checked
// element by element on the values it reduces. None when all are exact. Where the program
// raises an error, the reductions before it count and the error is left to the caller's own run.
std::optional<InexactReduction> first_reduction_not_exact_in_any_order(const Case& c,
                                                                       const ReductionOrder& order);

}  // namespace spmd::conformance
