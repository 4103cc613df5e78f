#pragma once
// One search spread over the processes mpirun (or srun) started: each process takes a share of
// the work items, serialises its results, and rank 0 gathers them in rank order. Used by
// `spmdsim plan` (docs/plan.md, "On a cluster"); nothing here knows what the items are.

#include <cstdint>
#include <string>
#include <vector>

namespace spmd::mpi {

// Whether a process manager started this process as one of several MPI ranks (Open MPI's
// mpirun sets OMPI_COMM_WORLD_SIZE; Slurm's srun with PMIx sets PMIX_RANK). Reads the
// environment only: MPI is not initialised to find out.
bool started_by_process_manager();

// This process's place among the ranks.
struct RankShare {
  int rank = 0;
  int ranks = 1;
  // The contiguous items [begin, end) of `items` this rank takes: the first `items % ranks`
  // ranks take one more, so shares differ by at most one item.
  std::int64_t begin(std::int64_t items) const;
  std::int64_t end(std::int64_t items) const;
};

// MPI's world, initialised for the life of the object (MPI_Init_thread, MPI_THREAD_FUNNELED:
// only the thread that made it calls MPI), and its gather.
class WorkSplit {
 public:
  WorkSplit();
  ~WorkSplit();
  WorkSplit(const WorkSplit&) = delete;
  WorkSplit& operator=(const WorkSplit&) = delete;

  RankShare share() const { return share_; }
  // Every rank's `local` bytes, on rank 0 in rank order; an empty vector on the other ranks.
  // Every rank must call it once, in the same place.
  std::vector<std::string> gather_on_rank_zero(const std::string& local) const;

 private:
  RankShare share_;
};

}  // namespace spmd::mpi
