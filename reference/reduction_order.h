#pragma once
// The order in which a reduction over a group of n contributions is folded: the second of the
// three faces of each collective algorithm (schedule, reduction order, closed-form time; see
// docs/design.md). The reference folds in this order directly, with no messages; the simulator and
// the real backends must produce the same bits.
//
// The orders, with their sources, are in docs/reduction-orders.md; each library's are written in
// its own file under reference/reduction_orders/. Ranks here are positions in the collective
// group (0..n-1), not device ids. A backend is given its order with `ring` in device ids (the
// whole mesh's ring); each group's fold uses for_group(the group's devices), `ring` in ranks.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reference/dtype.h"
#include "reference/float_numerics.h"
#include "reference/fold_tree.h"

namespace spmd {

// One contiguous range of elements [begin, end) and the fold that reduces it.
struct ChunkFold {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  FoldTree tree;
  friend bool operator==(const ChunkFold&, const ChunkFold&) = default;
};

enum class ReductionAlgorithm {
  xla_cpu,                 // identity, then rank order; bfloat16 summed in float32
  nccl_ring,               // NCCL ring, Simple protocol, one channel
  nccl_tree_chain,         // NCCL tree within one node: a chain
  gloo_ring,               // gloo::allreduce Algorithm::RING
  gloo_ring_chunked,       // gloo::AllreduceRingChunked
  gloo_bcube,              // gloo::allreduce Algorithm::BCUBE (base 2)
  mpi_ring,                // Open MPI coll/tuned allreduce algorithm 4
  mpi_recursive_doubling,  // algorithm 3
  mpi_rabenseifner,        // algorithm 6
  mpi_linear,              // algorithm 1 (basic linear)
  binary_tree,             // heap-ordered binary tree: node i = (x_i + sub(2i+1)) + sub(2i+2)
  // The simulator's own algorithms (collectives/), with no real library behind them. Where the
  // simulator cannot run one (halving_doubling over a group that is not a power of two, torus
  // whose dims do not cover the group, reduce-scatter by a tree, a two-way ring or the
  // bidirectional torus) it runs a ring instead, and these orders fold as nccl_ring there too.
  halving_doubling,    // recursive halving by distance n/2, n/4, ..., 1: a butterfly over bit-
                       // reversed ranks
  bidirectional_ring,  // first half of the elements as nccl_ring on `ring`, the rest on the
                       // reversed ring (position p holds ring[(n - p) % n])
  double_binary_tree,  // first half as binary_tree on `ring`, the rest on the mirrored ring
                       // (position p holds ring[n - 1 - p])
  torus,               // per dimension of torus_dims (last first): a ring reduce-scatter along
                       // each, then all-gathers back; see reduction_orders/simulator.cc
  bidirectional_torus,  // 2D even parts of the elements, each as torus with its own dimension
                        // order and ring direction (reference/torus_passes.h)
  // A reduction done inside a switch (NCCL's NVLS / NVLink SHARP, SHARP / CollNet in-network
  // reduction): the hardware fixes the order and nobody documents it. The reference and the
  // simulator fold it as nccl_ring, one order the switch may use; its bits are defined only where
  // every order gives the same (order_is_unspecified, reference/exact_in_any_order.h).
  in_switch,
};

inline constexpr ReductionAlgorithm kAllReductionAlgorithms[] = {
    ReductionAlgorithm::xla_cpu,
    ReductionAlgorithm::nccl_ring,
    ReductionAlgorithm::nccl_tree_chain,
    ReductionAlgorithm::gloo_ring,
    ReductionAlgorithm::gloo_ring_chunked,
    ReductionAlgorithm::gloo_bcube,
    ReductionAlgorithm::mpi_ring,
    ReductionAlgorithm::mpi_recursive_doubling,
    ReductionAlgorithm::mpi_rabenseifner,
    ReductionAlgorithm::mpi_linear,
    ReductionAlgorithm::binary_tree,
    ReductionAlgorithm::halving_doubling,
    ReductionAlgorithm::bidirectional_ring,
    ReductionAlgorithm::double_binary_tree,
    ReductionAlgorithm::torus,
    ReductionAlgorithm::bidirectional_torus,
    ReductionAlgorithm::in_switch,
};

// Whether nobody can say in which order `algorithm` folds (in_switch): a conformance run checks
// its bits only on data whose reductions are exact in any order, and says "order unspecified".
constexpr bool order_is_unspecified(ReductionAlgorithm algorithm) {
  return algorithm == ReductionAlgorithm::in_switch;
}

std::string_view reduction_algorithm_name(ReductionAlgorithm algorithm);  // "nccl_ring", ...
ReductionAlgorithm reduction_algorithm_from_name(std::string_view name);  // throws spmd::Error

// The simulator's algorithms split element ranges evenly: part i of `length` elements cut into
// `parts` starts at length * i / parts (floor), so part sizes differ by at most one.
inline std::int64_t even_split_begin(std::int64_t length, int parts, int i) {
  return length * i / parts;  // length * parts stays far below 2^63 for any real buffer
}
// The two-halves algorithms (bidirectional_ring, double_binary_tree) give the first
// ceil(count / 2) elements to the first direction or tree.
inline std::int64_t first_half_elements(std::int64_t count) { return (count + 1) / 2; }

struct ReductionOrder {
  ReductionAlgorithm algorithm = ReductionAlgorithm::xla_cpu;
  // Ring / chain order. Given to a backend: ring[i] is the device id at ring position i, a
  // permutation of the mesh's devices. In the fold functions below (the order of one group, as
  // for_group gives it): ring[i] is the group rank at ring position i. Empty: 0, 1, ..., n-1.
  // Used by nccl_ring, nccl_tree_chain and binary_tree (and in_switch, folded as nccl_ring); the
  // other algorithms fold over group ranks (Gloo and MPI ranks are the group ranks) but still
  // reject a ring that is not a permutation of 0..n-1.
  std::vector<int> ring;
  // NCCL Simple chunk in bytes for full loops (NCCL_BUFFSIZE / 8 * 4 = 2 MiB by default).
  std::int64_t nccl_chunk_bytes = 2 * 1024 * 1024;
  // Gloo ring maxSegmentSize in bytes (1 MiB by default).
  std::int64_t gloo_max_segment_bytes = 1024 * 1024;
  // torus, bidirectional_torus: the group as a row-major grid (last dimension fastest); product
  // == group size.
  std::vector<int> torus_dims;

  // Whether bfloat16 sums are carried in float32 and rounded once at the end (XLA:CPU's
  // AllReducePromotion); otherwise every addition rounds to the element type.
  bool bf16_accumulates_in_f32() const { return algorithm == ReductionAlgorithm::xla_cpu; }

  // The arithmetic of the platform whose order this is: XLA:CPU's (subnormals flushed, bfloat16
  // excess precision) for xla_cpu; plain IEEE for the GPU, Gloo, Open MPI and simulator orders.
  FloatNumerics numerics() const {
    return algorithm == ReductionAlgorithm::xla_cpu ? kXlaCpuNumerics : kIeeeNumerics;
  }

  // All-reduce of `count` elements of `dtype` over a group of `group_size`: chunks covering
  // [0, count) in increasing order, each with its fold. Empty chunks are left out, so count == 0
  // gives no chunks. A group of one folds rank 0 onto the identity under xla_cpu (XLA:CPU's
  // in-process all-reduce does so inside a multi-device program: -0.0 becomes +0.0) and is a
  // plain copy of rank 0 under the other orders (NCCL, Gloo and Open MPI copy). Throws
  // spmd::Error for a bad group size, ring or algorithm parameter.
  std::vector<ChunkFold> all_reduce_plan(int group_size, std::int64_t count, DType dtype) const;

  // Reduce-scatter: the fold that produces the block owned by group rank `destination`. Rings
  // (nccl_ring, gloo_ring, gloo_ring_chunked, mpi_ring) use the fold of their chunk that ends at
  // `destination`; torus the torus fold of the destination's coordinates; the simulator's trees,
  // two-way ring and bidirectional torus use nccl_ring's (the bidirectional torus only where it
  // runs a ring: elsewhere its block folds in pieces, reduce_scatter_plan); the other
  // algorithms use their all-reduce fold for every block (a model choice for most of them, see
  // docs/reduction-orders.md).
  FoldTree reduce_scatter_fold(int group_size, int destination) const;

  // Reduce-scatter: the chunks of the `count` elements of the block owned by group rank
  // `destination`, each with its fold. One chunk with reduce_scatter_fold, except where the block
  // folds in pieces: the bidirectional torus splits every block between its 2D passes, each
  // folding its piece as a torus along its own dimension order and direction.
  std::vector<ChunkFold> reduce_scatter_plan(int group_size, int destination,
                                             std::int64_t count) const;

  // Throws spmd::Error unless `ring` is empty or a permutation of the device ids
  // 0..device_count-1 (a device ring, as a backend is given it).
  void check_device_ring(int device_count) const;

  // The order of one collective group, from this order with `ring` in device ids: the group's
  // ring visits its members in the order `ring` lists their devices, as group ranks (rank r is
  // group_devices[r]). An empty ring stays empty (rank order). Throws spmd::Error when `ring`
  // misses one of the group's devices.
  ReductionOrder for_group(std::span<const int> group_devices) const;

  std::string describe() const;  // "nccl_ring(ring=0,2,1,3)"

  // Equal when every field is (an empty ring and the identity ring are different fields).
  friend bool operator==(const ReductionOrder&, const ReductionOrder&) = default;
};

}  // namespace spmd
