#pragma once
// Inside collectives/: the ring all-reduce's loop and chunk structure (NCCL's), shared by the
// ring and the bidirectional ring, for their schedules and their closed forms.

#include <cstdint>
#include <utility>
#include <vector>

#include "collectives/schedule_builder.h"

namespace spmd::collectives {

using ElementRange = std::pair<std::int64_t, std::int64_t>;  // [begin, end)

// NCCL's loops over `count` elements: each loop holds n chunks (ring position c starts chunk c);
// the last loop's chunks are ceil(remaining / n) rounded up to 16 bytes; chunks past the end
// are empty.
std::vector<std::vector<ElementRange>> ring_loops(std::int64_t count, int n,
                                                  std::int64_t element_bytes,
                                                  std::int64_t chunk_bytes);

// Adds a ring all-reduce of elements [base, base + count) along `ring`, starting at step
// `first_step`; returns the number of steps it takes.
std::size_t add_ring_all_reduce(ScheduleBuilder& builder, const RingOrder& ring,
                                std::int64_t base, std::int64_t count,
                                const CollectiveShape& shape, std::size_t first_step);

// The largest message of each step of that all-reduce, in bytes.
std::vector<std::int64_t> ring_all_reduce_step_bytes(std::int64_t count, int n,
                                                     const CollectiveShape& shape);

}  // namespace spmd::collectives
