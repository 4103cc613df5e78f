#pragma once
// The collectives of spmd::Array on an MPI communicator, one MPI call each: the group is the
// communicator and a device's group rank is its MPI rank. Arrays are 1-D; blocks are contiguous
// ranges of elements in rank order (JAX's tiled collectives on axis 0). Which algorithm Open MPI
// runs, and so the order of a float sum, is pinned outside, by MCA parameters (mpi_pins.h).
// Reductions use the datatypes and ops of mpi_reduction.h; data movement moves bytes, so every
// dtype moves.

#include <mpi.h>

#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "backends/mpi/mpi_reduction.h"
#include "reference/array.h"
#include "reference/fold_reduce.h"

namespace spmd::mpi {

// MPI_Allreduce: every rank gets `op` over all ranks' x.
Array all_reduce(const Array& x, ReduceOp op, MPI_Comm comm,
                 LeftOperand left = LeftOperand::received);
inline Array all_reduce_sum(const Array& x, MPI_Comm comm) {
  return all_reduce(x, ReduceOp::sum, comm);
}

// The MPI calls that give a reduce-scatter; which one matches which reference order is in
// mpi_pins.h.
enum class ReduceScatterCall {
  reduce_scatter_block,  // MPI_Reduce_scatter_block
  reduce_scatter,        // MPI_Reduce_scatter with equal counts
  all_reduce_own_block,  // MPI_Allreduce, then the rank's own block
};
// Rank r gets block r of `op` over all ranks' x; x.size() must divide evenly by the group size.
Array reduce_scatter(const Array& x, ReduceOp op, ReduceScatterCall call, MPI_Comm comm);
inline Array reduce_scatter_block_sum(const Array& x, MPI_Comm comm) {
  return reduce_scatter(x, ReduceOp::sum, ReduceScatterCall::reduce_scatter_block, comm);
}

// MPI_Allgather: every rank's x, concatenated in rank order.
Array all_gather(const Array& x, MPI_Comm comm);
// MPI_Alltoall: rank r gets block r of every rank's x, concatenated in rank order.
Array all_to_all(const Array& x, MPI_Comm comm);
// Point-to-point (MPI_Isend / MPI_Irecv): for each (source, destination) pair the destination
// gets the source's x; ranks that are no destination get zeros, as in jax.lax.ppermute.
Array ppermute(const Array& x, const std::vector<std::pair<int, int>>& perm, MPI_Comm comm);
// MPI_Bcast: every rank gets the root's x.
Array broadcast(const Array& x, int root, MPI_Comm comm);

// MPI_Allgatherv of bytes: rank r gives `own`, bytes_per_rank[r] bytes (0 for a rank with nothing
// to give); every rank gets all of them end to end in rank order.
std::vector<std::byte> all_gather_bytes(std::span<const std::byte> own,
                                        const std::vector<int>& bytes_per_rank, MPI_Comm comm);

// MPI_Comm_split of `comm`: the ranks with a key form a new communicator, ranked by key; the
// others get MPI_COMM_NULL. Collective over `comm`.
MPI_Comm split(MPI_Comm comm, std::optional<int> key);

int rank_of(MPI_Comm comm);
int size_of(MPI_Comm comm);

}  // namespace spmd::mpi
