#pragma once
// The collectives of spmd::Array on an MPI communicator, one MPI call each: the group is the
// communicator and a device's group rank is its MPI rank. Arrays are 1-D; blocks are contiguous
// ranges of elements in rank order (JAX's tiled collectives on axis 0). Which algorithm Open MPI
// runs, and so the order of a float sum, is pinned outside, by MCA parameters (mpi_pins.h).

#include <mpi.h>

#include <utility>
#include <vector>

#include "reference/array.h"

namespace spmd::mpi {

// The MPI datatype of an element; spmd::Error for a dtype MPI has no sum for (float16, bfloat16,
// bool).
MPI_Datatype datatype_of(DType dtype);

// MPI_Allreduce with MPI_SUM.
Array all_reduce_sum(const Array& x, MPI_Comm comm);
// MPI_Allgather: every rank's x, concatenated in rank order.
Array all_gather(const Array& x, MPI_Comm comm);
// MPI_Reduce_scatter_block with MPI_SUM: rank r gets block r of the sum; x.size() must divide
// evenly by the group size.
Array reduce_scatter_block_sum(const Array& x, MPI_Comm comm);
// MPI_Alltoall: rank r gets block r of every rank's x, concatenated in rank order.
Array all_to_all(const Array& x, MPI_Comm comm);
// Point-to-point (MPI_Isend / MPI_Irecv): for each (source, destination) pair the destination
// gets the source's x; ranks that are no destination get zeros, as in jax.lax.ppermute.
Array ppermute(const Array& x, const std::vector<std::pair<int, int>>& perm, MPI_Comm comm);
// MPI_Bcast: every rank gets the root's x.
Array broadcast(const Array& x, int root, MPI_Comm comm);

int rank_of(MPI_Comm comm);
int size_of(MPI_Comm comm);

}  // namespace spmd::mpi
