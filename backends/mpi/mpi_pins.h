#pragma once
// Open MPI 4.1 coll/tuned algorithms pinned with MCA parameters, and the reference order each one
// folds a sum in (docs/reduction-orders.md#open-mpi; `ompi_info --param coll tuned --level 9`
// lists the ids): for the differential tests (AllReducePin) and for `spmdsim conform --backend
// mpi --order ORDER` (OrderPin).

#include <string>
#include <string_view>
#include <vector>

#include "backends/mpi/mpi_collectives.h"
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
// MPI_Reduce_scatter algorithm 3 (ring, ompi_coll_base_reduce_scatter_intra_ring): block b
// starts at rank b+1 and each next rank adds what it received to its own data, rank b last: the
// mpi_ring reduce-scatter fold.
inline constexpr int kReduceScatterRing = 3;
// Reduce_scatter_block algorithm 4 (butterfly): the mpi_recursive_doubling fold (pairs of the
// extra ranks first, then the butterfly) for every block.
inline constexpr int kReduceScatterBlockButterfly = 4;

// One reference order as Open MPI runs it: the all-reduce algorithm, and the reduce-scatter call
// and algorithm whose folds are the order's psum_scatter folds (reduce_scatter_fold). Found by
// experiment on Open MPI 4.1.4, float32 data whose sums depend on the order, 2 to 8 ranks, blocks
// of 1, 3 and 1000 elements: every reduce_scatter (1-4) and reduce_scatter_block (1-4) algorithm
// against every MPI order's fold (docs/backends.md#open-mpi-backendsmpi has the table).
struct OrderPin {
  ReductionAlgorithm order;
  int coll_tuned_allreduce_algorithm;
  ReduceScatterCall reduce_scatter_call;
  int coll_tuned_reduce_scatter_block_algorithm;
};

inline constexpr OrderPin kOrderPins[] = {
    {ReductionAlgorithm::mpi_ring, 4, ReduceScatterCall::reduce_scatter,
     kReduceScatterBlockLinear},
    {ReductionAlgorithm::mpi_recursive_doubling, 3, ReduceScatterCall::reduce_scatter_block,
     kReduceScatterBlockButterfly},
    {ReductionAlgorithm::mpi_rabenseifner, 6, ReduceScatterCall::reduce_scatter_block,
     kReduceScatterBlockButterfly},
    {ReductionAlgorithm::mpi_linear, 1, ReduceScatterCall::reduce_scatter_block,
     kReduceScatterBlockLinear},
};

// The pin of `order`; spmd::Error listing the four orders Open MPI can be pinned to otherwise.
const OrderPin& order_pin(ReductionAlgorithm order);

struct McaParameter {
  std::string name;  // without the OMPI_MCA_ prefix
  int value;
};

// Every MCA parameter `pin` needs: dynamic rules on, and the all-reduce, reduce-scatter (ring),
// reduce-scatter-block and reduce (linear) algorithms, so that every reduction of
// mpi_collectives.h runs a pinned algorithm.
std::vector<McaParameter> mca_parameters(const OrderPin& pin);

// The parameters whose OMPI_MCA_* variable is set to another value (mpirun --mca passes them
// on), as "NAME is VALUE, expected WANTED" phrases; empty when none conflicts.
std::vector<std::string> conflicting_mca_parameters(const std::vector<McaParameter>& parameters);

}  // namespace spmd::mpi
