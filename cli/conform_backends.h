#pragma once
// Every backend this build has, registered for `spmdsim conform --backend NAME`: the reference
// and the simulator (always in the registry), Gloo, Open MPI, and the CUDA and NCCL backends when the build
// has them (SPMD_CUDA, SPMD_NCCL).

namespace spmd {

void register_conform_backends();

}  // namespace spmd
