#pragma once
// Checks a backend against the reference (docs/testing.md): runs a program on the backend and
// on spmd::ReferenceBackend folding float sums in the backend's order, and compares every output
// bit for bit (NaN payloads aside). The report names the first difference:
//   output 0 element (3, 1) (device 5, element (1, 1)) is 1.50000012, expected 1.5 (the
//   reference in nccl_ring order)
// and a disagreement about errors: the backend must reject what the reference rejects, and run
// what it runs.

#include <string>

#include "reference/backend.h"
#include "reference/reduction_order.h"
#include "testing/program.h"

namespace spmd::testkit {

// One line naming the first difference between `backend`'s outputs of `program` and the
// reference's in `order` (the order `backend` folds in, its ring in device ids), or "" when they
// are equal or both reject the program. The reference has as many devices as the backend.
std::string difference_from_reference(Backend& backend, const Program& program,
                                      const ReductionOrder& order);

// The same inside a RapidCheck property: fails the case with the report (RC_FAIL) unless the
// backend matches the reference.
void rc_assert_matches_reference(Backend& backend, const Program& program,
                                 const ReductionOrder& order);

}  // namespace spmd::testkit
