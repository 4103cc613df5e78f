#pragma once
// The simulator behind `spmdsim conform --backend sim`: a machine with the case's device count,
// on a topology named on the command line, running every collective with the algorithm whose
// reference order the comparison uses.

#include <memory>
#include <optional>
#include <string>

#include "collectives/algorithm.h"
#include "reference/backend.h"
#include "reference/reduction_order.h"
#include "sim/machine_spec.h"

namespace spmd {

// The simulator algorithm that folds in `order` (xla_cpu -> direct, nccl_ring -> ring, in_switch
// -> ring, ...); spmd::Error for orders only a real library has (Gloo, Open MPI, NCCL's tree
// chain).
collectives::Algorithm algorithm_for_order(const ReductionOrder& order);
// The reference order of a simulator algorithm run with rings in group rank order.
ReductionOrder order_for_algorithm(collectives::Algorithm algorithm);

// `topology` as `--topology` names it (topology/topology_spec.h), links 100 GB/s and 1 us.
std::unique_ptr<Backend> make_sim_backend(const ReductionOrder& order, int device_count,
                                          const std::string& topology);

}  // namespace spmd
