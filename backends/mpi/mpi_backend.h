#pragma once
// Open MPI as a spmd::Backend: `mpirun -np N spmdsim conform --backend mpi` (cli/mpi_conform.h).
// Every MPI process runs the whole program, every device's function on threads (LibraryBackend),
// so errors, deadlock reports and case results are the same in every process and none waits for
// another that failed. At each group operation world rank r hands device r's buffer to the real
// MPI call on a communicator of the group's members; the members' results are then shared with
// every process (MPI_Allgatherv over MPI_COMM_WORLD), so that every process returns every
// device's result. A process whose rank is no member takes part only in making the communicator
// and in the sharing.

#include <map>
#include <vector>

#include <mpi.h>

#include "backends/group_collectives.h"
#include "backends/mpi/mpi_collectives.h"

namespace spmd::mpi {

// The five group operations on MPI_COMM_WORLD's ranks, device id == world rank. Communicators
// are made on a group's first operation (MPI_Comm_split, collective over the world: every process
// reaches it at the same point of the same program) and freed with this object.
class MpiGroupCollectives : public GroupCollectives {
 public:
  // `reduce_scatter_call`: the MPI call whose folds are the pinned order's (mpi_pins.h);
  // `ring_all_reduce`: whether the pinned all-reduce is Open MPI's ring.
  MpiGroupCollectives(ReduceScatterCall reduce_scatter_call, bool ring_all_reduce)
      : reduce_scatter_call_(reduce_scatter_call), ring_all_reduce_(ring_all_reduce) {}
  ~MpiGroupCollectives() override;
  MpiGroupCollectives(const MpiGroupCollectives&) = delete;
  MpiGroupCollectives& operator=(const MpiGroupCollectives&) = delete;

  std::vector<Array> all_reduce(const GroupBuffers& group, ReduceOp op) override;
  std::vector<Array> all_gather(const GroupBuffers& group) override;
  std::vector<Array> reduce_scatter(const GroupBuffers& group, ReduceOp op) override;
  std::vector<Array> all_to_all(const GroupBuffers& group) override;
  std::vector<Array> permute(const GroupBuffers& group,
                             const std::vector<std::pair<int, int>>& pairs) override;

 private:
  template <class Call>
  std::vector<Array> on_members(const GroupBuffers& group, std::int64_t result_elements,
                                Call call);
  MPI_Comm communicator(const std::vector<int>& devices);

  ReduceScatterCall reduce_scatter_call_;
  bool ring_all_reduce_;
  std::map<std::vector<int>, MPI_Comm> communicators_;  // by the group's devices in rank order
};

// Registers "mpi" (backend_registry.h), native order mpi_ring. Its backend needs MPI initialized
// (MpiSession) with the order's algorithms pinned, and at least as many world ranks as the case
// has devices; otherwise making it throws spmd::Error saying what to run.
void register_mpi_backend();

}  // namespace spmd::mpi
