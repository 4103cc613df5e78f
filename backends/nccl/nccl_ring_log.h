#pragma once
// The ring order NCCL chose, read from its debug log. With NCCL_DEBUG=INFO (subsystem INIT) rank 0
// of a communicator prints one line per channel (NCCL src/graph/rings.cc ncclBuildRings):
//   host:pid:tid [0] NCCL INFO Channel 00/01 :    0   2   1   3
// The i-th number is the rank at ring index i (init.cc setupChannel: ring->index is the distance
// from rank 0), which is the ring the reference's nccl_ring order takes.

#include <string_view>
#include <vector>

namespace spmd::nccl {

// The ring of channel 0 in the last such line for `ranks` ranks in `log_text`. spmd::Error when
// there is none, or when the line is not a permutation of 0..ranks-1 (naming the line).
std::vector<int> ring_from_nccl_log(std::string_view log_text, int ranks);

}  // namespace spmd::nccl
