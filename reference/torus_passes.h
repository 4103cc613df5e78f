#pragma once
// The passes of the simulator's torus algorithms: what collectives/torus.cc and
// collectives/bidirectional_torus.cc schedule and what their reduction orders
// (reference/reduction_orders/simulator.cc) fold, defined once for both.
//
// The group is a row-major grid over `dims` (last dimension fastest). A pass all-reduces a range
// of the elements: it reduce-scatters the range along each dimension of its dimension_order in
// turn (the range a rank holds so far is split evenly into dims[j] blocks, even_split_begin, and
// block b is reduced around every line of dimension j as on a ring: starting one hop after
// coordinate b, each receiver's value + received, ending at b, which keeps it), then all-gathers
// the blocks back in the reverse order. Its rings run towards higher coordinates (direction +1)
// or lower ones (direction -1). A reduce-scatter runs only the first half of its passes, an
// all-gather only the second (starting from the blocks the first half would have left).

#include <cstdint>
#include <span>
#include <vector>

namespace spmd {

struct TorusPass {
  std::int64_t begin = 0;  // the elements [begin, end) it all-reduces
  std::int64_t end = 0;
  std::vector<int> dimension_order;  // reduce-scattered in this order, gathered back in reverse
  int direction = 1;                 // +1: each rank sends to coordinate c + 1; -1: to c - 1
  // A piece pass (shard_pieces > 0) works on piece shard_piece of every rank's shard instead of
  // a range: [begin, end) splits evenly into one shard per rank, each shard evenly into
  // shard_pieces pieces. Its blocks are sets of shards, not runs: the block with coordinate b
  // along dimension j holds the shards of the ranks at coordinate b there, so whatever its
  // dimension order, the reduce-scatter leaves every rank the piece of its own shard.
  int shard_piece = 0;
  int shard_pieces = 0;
};

// Whether dims (each at least 1) are a grid of exactly group_size ranks.
bool torus_dims_cover(std::span<const int> dims, int group_size);

// torus: one pass over all `count` elements, the last dimension first, direction +1.
std::vector<TorusPass> torus_passes(std::span<const int> dims, std::int64_t count);

// torus reduce-scatter and all-gather: one pass over all `count` elements (the ranks' shards in
// rank order), dimension 0 first, direction +1. Dimension 0 varies slowest in rank order, so
// every block a step moves is one run of whole shards, and the block a rank keeps at the end of
// the reduce-scatter is its own shard (rank r's, elements r * count / ranks onwards).
std::vector<TorusPass> torus_rank_order_passes(std::span<const int> dims, std::int64_t count);

// bidirectional_torus over the D dimensions of size above 1 (r_0 < r_1 < ...; those of size 1
// have no ring): 2D passes over the even parts of the elements (even_split_begin(count, 2D, p)).
// Pass p goes along r_(p % D), r_(p % D + 1), ... (indices mod D); the first D run direction +1,
// the others -1. In the i-th reduce-scatter (and all-gather) phase the passes of one direction
// are on D different dimensions, so every dimension's links carry one pass each way. With no
// dimension above 1 (one rank): one pass with no dimensions.
std::vector<TorusPass> bidirectional_torus_passes(std::span<const int> dims, std::int64_t count);

// bidirectional_torus reduce-scatter and all-gather over `count` elements (the ranks' shards in
// rank order): the passes of bidirectional_torus_passes, each a piece pass (shard_piece p of 2D)
// over all of them, so that every rank's shard is split between the 2D passes.
std::vector<TorusPass> bidirectional_torus_piece_passes(std::span<const int> dims,
                                                        std::int64_t count);

// The grid's coordinates: rank <-> coordinate per dimension.
class TorusGrid {
 public:
  explicit TorusGrid(std::span<const int> dims) : dims_(dims.begin(), dims.end()) {}
  std::size_t count() const { return dims_.size(); }
  int size(std::size_t j) const { return dims_[j]; }
  int stride(std::size_t j) const {
    int s = 1;
    for (std::size_t k = j + 1; k < dims_.size(); ++k) s *= dims_[k];
    return s;
  }
  int coordinate(int rank, std::size_t j) const { return rank / stride(j) % dims_[j]; }
  // The rank on the same line along j at coordinate c (taken mod the dimension's size).
  int along(int rank, std::size_t j, std::int64_t c) const {
    const int size = dims_[j];
    const int wrapped = static_cast<int>(((c % size) + size) % size);
    return rank + (wrapped - coordinate(rank, j)) * stride(j);
  }
  // The rank at `coordinates` (one per dimension).
  int rank_at(std::span<const int> coordinates) const {
    int rank = 0;
    for (std::size_t j = 0; j < dims_.size(); ++j) rank = rank * dims_[j] + coordinates[j];
    return rank;
  }

 private:
  std::vector<int> dims_;
};

}  // namespace spmd
