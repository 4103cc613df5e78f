#pragma once
// How NCCL's ring all-reduce (Simple protocol, one channel; src/device/all_reduce.h runRing)
// cuts a buffer into loops and chunks: the reference's nccl_ring order folds chunk by chunk in
// this split and the ring schedule in collectives/ moves data in it, so the two stay the same
// bits. docs/reduction-orders.md#ring-loops-and-chunks gives the rules and sources.

#include <cstdint>
#include <utility>
#include <vector>

namespace spmd {

using ElementRange = std::pair<std::int64_t, std::int64_t>;  // [begin, end)

// The loops over `count` elements on a ring of n ranks, each of n chunk ranges (chunk c is the
// one ring position c + 1 starts). A full loop's chunks hold chunk_bytes / element_bytes
// elements (at least one); the last loop's chunks hold ceil(remaining / n) rounded up to a
// multiple of 16 bytes (of one element when an element is wider), so its trailing chunks may be
// empty (begin == end == count).
std::vector<std::vector<ElementRange>> nccl_ring_loops(std::int64_t count, int n,
                                                       std::int64_t element_bytes,
                                                       std::int64_t chunk_bytes);

// The same split one loop at a time, without the list (the simulator's timing path produces a
// ring's steps as it runs them): loop `index` starts at element `begin`, and its chunk c is
// [min(count, begin + c * chunk), min(count, begin + (c + 1) * chunk)).
struct NcclRingLoop {
  std::int64_t begin = 0;
  std::int64_t chunk = 0;
  ElementRange chunk_range(std::int64_t count, int c) const;
};
std::int64_t nccl_ring_loop_count(std::int64_t count, int n, std::int64_t element_bytes,
                                  std::int64_t chunk_bytes);
NcclRingLoop nccl_ring_loop(std::int64_t count, int n, std::int64_t element_bytes,
                            std::int64_t chunk_bytes, std::int64_t index);

}  // namespace spmd
