#pragma once
// One differential case, for any collective library: what each rank runs on its contribution
// with the library (`Group` is the library's handle: an MPI communicator, a Gloo context), and
// what the reference says every rank gets. The MPI and Gloo tests run the same kind of case.

#include <functional>
#include <string>
#include <vector>

#include "reference/array.h"
#include "reference/collective_call.h"
#include "reference/reduction_order.h"

namespace spmd::differential {

template <class Group>
struct DifferentialCase {
  std::string label;  // "all_reduce float32 x1000"
  DType dtype = DType::float32;
  std::int64_t count = 0;  // elements in each rank's contribution
  std::function<Array(const Array& own, Group group)> run_library;
  std::function<std::vector<Array>(const std::vector<Array>& contributions)> run_reference;
};

// "all_reduce float32 x1000"
std::string case_label(const std::string& collective, DType dtype, std::int64_t count);

// The reference's results of `call` on a one-axis mesh ('i') of one device per contribution
// (1-D arrays), folding float sums in `order`.
std::vector<Array> reference_results(const CollectiveCall& call,
                                     const std::vector<Array>& contributions,
                                     const ReductionOrder& order);

// Empty when every rank's result equals the expected one bit for bit; else one line naming the
// first rank and element that differ.
std::string first_rank_difference(const std::vector<Array>& results,
                                  const std::vector<Array>& expected);

}  // namespace spmd::differential
