#pragma once
// `mpirun -np N spmdsim conform --backend mpi [--order mpi_ring|mpi_recursive_doubling|
//  mpi_rabenseifner|mpi_linear] PATH...`: the conform command on Open MPI. Every process pins the
// order's algorithms, initializes MPI, runs every case (backends/mpi/mpi_backend.h) and
// finalizes; only world rank 0 prints, and every rank returns the same exit code.

#include <ostream>

#include "cli/conform_command.h"

namespace spmd {

// The exit code of run_conform_command, or 2 for bad input (an order Open MPI has no pin for,
// --mca values that conflict with the order's pins), 3 for an internal error; errors are
// printed to `err` by world rank 0.
int run_mpi_conform_command(const ConformOptions& options, std::ostream& out, std::ostream& err);

}  // namespace spmd
