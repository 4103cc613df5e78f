#pragma once
// Open MPI 4.1 coll/tuned algorithms that the differential tests pin with MCA parameters, and
// the reference order each one folds a sum in (docs/reduction-orders.md#open-mpi;
// `ompi_info --param coll tuned --level 9` lists the ids).

#include <string_view>

#include "reference/reduction_order.h"

namespace spmd::mpi {

struct AllReducePin {
  std::string_view name;  // --all-reduce NAME
  int coll_tuned_allreduce_algorithm;
  ReductionAlgorithm order;
};

inline constexpr AllReducePin kAllReducePins[] = {
    {"linear", 1, ReductionAlgorithm::mpi_linear},
    {"recursive_doubling", 3, ReductionAlgorithm::mpi_recursive_doubling},
    {"ring", 4, ReductionAlgorithm::mpi_ring},
    {"rabenseifner", 6, ReductionAlgorithm::mpi_rabenseifner},
};

// Reduce_scatter_block algorithm 1 (basic_linear) reduces to rank 0 with the tuned reduce and
// then scatters; with reduce algorithm 1 (linear) that sum is x_0 + (x_1 + (... + x_{n-1})),
// the mpi_linear order (coll_base_reduce.c ompi_coll_base_reduce_intra_basic_linear: the root
// starts from rank n-1's data and adds ranks n-2, ..., 0 in front).
inline constexpr int kReduceScatterBlockLinear = 1;
inline constexpr int kReduceLinear = 1;

}  // namespace spmd::mpi
