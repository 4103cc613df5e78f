#pragma once
// Open MPI for one spmdsim run: the coll/tuned algorithms pinned for a reference order (OMPI_MCA_*
// variables set before MPI_Init, where Open MPI reads them), MPI initialized for device threads
// that call it one at a time, and finalized at the end.

#include "backends/mpi/mpi_pins.h"

namespace spmd::mpi {

// Sets the OMPI_MCA_* variables of mca_parameters(pin); call before MPI_Init. spmd::Error naming
// every parameter that mpirun (--mca) or the environment already set to another value.
void pin_coll_tuned(const OrderPin& pin);

// spmd::Error unless the OMPI_MCA_* variables pin `pin`'s algorithms (pin_coll_tuned ran).
void check_coll_tuned_pinned(const OrderPin& pin);

// MPI_Init_thread with MPI_THREAD_SERIALIZED (the device thread that arrives last at a collective
// makes the MPI calls); the destructor frees mpi_reduction.h's ops and calls MPI_Finalize.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

}  // namespace spmd::mpi
