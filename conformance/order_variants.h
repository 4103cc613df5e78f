#pragma once
// The plausible wrong reduction orders that an order-sensitive conformance case must tell apart
// from its own (docs/conformance-format.md, "Order cases"). Each is a change of the correct
// order's all-reduce plan: leaves relabelled (ring rotated by one, ring reversed, ranks r and r^1
// swapped), chunk boundaries moved by one alignment unit, the chunks' trees exchanged, or XLA:CPU's
// rank-order fold. A change that gives a plan no data can tell apart (the same fold, up to the
// order of the operands of each addition, for every element) is skipped with the reason.

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "reference/dtype.h"
#include "reference/reduction_order.h"

namespace spmd::conformance {

struct WrongOrder {
  std::string name;  // "ring_rotated", ...
  std::vector<ChunkFold> plan;
};

struct SkippedWrongOrder {
  std::string name;
  std::string reason;  // one line
};

struct WrongOrders {
  std::vector<WrongOrder> orders;
  std::vector<SkippedWrongOrder> skipped;
};

// The wrong orders of `order` for an all-reduce of `count` elements of `dtype` over
// `group_size` ranks, in a fixed order of names.
WrongOrders wrong_orders(const ReductionOrder& order, int group_size, std::int64_t count,
                         DType dtype);

// The elements chunk boundaries are aligned to: 16 bytes where the chunks are NCCL's (nccl_ring,
// bidirectional_ring, and halving_doubling / the tori where they run NCCL's ring; all_reduce.h
// alignUp(..., 16/sizeof(T))), one element elsewhere (Gloo segments are whole elements, Open MPI
// blocks and the simulator's even splits are cut at any element).
std::int64_t chunk_alignment_elements(const ReductionOrder& order, int group_size, DType dtype);

// `plan` with every boundary between two chunks moved by `shift_elements` (later when positive),
// clamped to [0, count); chunks that become empty are dropped.
std::vector<ChunkFold> chunk_boundaries_moved(std::span<const ChunkFold> plan,
                                              std::int64_t shift_elements, std::int64_t count);

// Whether two plans fold every element the same way, up to the order of the two operands of each
// addition (IEEE addition, max and min commute, NaN payloads aside): no data tells them apart.
bool same_folds(std::span<const ChunkFold> a, std::span<const ChunkFold> b);

// The element ranges [begin, end) where two plans fold differently (same_folds' sense), in
// increasing order.
std::vector<std::pair<std::int64_t, std::int64_t>> ranges_folded_differently(
    std::span<const ChunkFold> a, std::span<const ChunkFold> b);

}  // namespace spmd::conformance
