#include "cli/conform_backends.h"

#include "backends/gloo/gloo_backend.h"
#include "backends/mpi/mpi_backend.h"
#ifdef SPMD_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#endif
#ifdef SPMD_HAVE_NCCL
#include "backends/nccl/nccl_backend.h"
#endif

namespace spmd {

void register_conform_backends() {
  register_gloo_backend();
  mpi::register_mpi_backend();  // runs under mpirun only (cli/mpi_conform.h)
#ifdef SPMD_HAVE_CUDA
  cuda::register_cuda_backend();
#endif
#ifdef SPMD_HAVE_NCCL
  register_nccl_backend();
#endif
}

}  // namespace spmd
