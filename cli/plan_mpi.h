#pragma once
// `spmdsim plan` started by mpirun (or srun): the layouts split over the ranks, each rank's
// results gathered on rank 0, which prints (docs/plan.md, "On a cluster"). The output is the
// same, byte for byte, as one process's.

#include <cstddef>
#include <optional>
#include <vector>

#include "backends/mpi/mpi_work_split.h"
#include "training/layout_search.h"

namespace spmd {

class MpiSearchShare : public training::SearchShare {
 public:
  explicit MpiSearchShare(const mpi::WorkSplit& split) : split_(split) {}
  // Rank r of K evaluates candidates r, r + K, r + 2K, ...
  std::size_t first() const override;
  std::size_t stride() const override;
  // The summaries travel as their bytes (the ranks run one binary on one kind of host).
  std::optional<training::ShareSummary> gather(training::ShareSummary local,
                                               const training::KeptResults& kept) const override;

 private:
  const mpi::WorkSplit& split_;
};

// Threads per rank where --threads is left to the default: the node's cores over the ranks
// mpirun started on it (OMPI_COMM_WORLD_LOCAL_SIZE), at least one.
unsigned default_threads_per_rank();

}  // namespace spmd
