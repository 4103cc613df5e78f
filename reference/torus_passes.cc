#include "reference/torus_passes.h"

#include "reference/reduction_order.h"

namespace spmd {

bool torus_dims_cover(std::span<const int> dims, int group_size) {
  std::int64_t product = 1;
  for (int d : dims) {
    if (d < 1) return false;
    product *= d;
  }
  return !dims.empty() && product == group_size;
}

std::vector<TorusPass> torus_passes(std::span<const int> dims, std::int64_t count) {
  TorusPass pass{.begin = 0, .end = count};
  for (std::size_t j = dims.size(); j-- > 0;) pass.dimension_order.push_back(static_cast<int>(j));
  return {pass};
}

std::vector<TorusPass> torus_rank_order_passes(std::span<const int> dims, std::int64_t count) {
  TorusPass pass{.begin = 0, .end = count};
  for (std::size_t j = 0; j < dims.size(); ++j) pass.dimension_order.push_back(static_cast<int>(j));
  return {pass};
}

std::vector<TorusPass> bidirectional_torus_passes(std::span<const int> dims, std::int64_t count) {
  std::vector<int> rings;  // a dimension of size 1 has nothing to reduce along
  for (std::size_t j = 0; j < dims.size(); ++j) {
    if (dims[j] > 1) rings.push_back(static_cast<int>(j));
  }
  const int d = static_cast<int>(rings.size());
  if (d == 0) return {TorusPass{.begin = 0, .end = count}};
  std::vector<TorusPass> passes;
  for (int p = 0; p < 2 * d; ++p) {
    TorusPass pass{.begin = even_split_begin(count, 2 * d, p),
                   .end = even_split_begin(count, 2 * d, p + 1),
                   .direction = p < d ? 1 : -1};
    for (int i = 0; i < d; ++i) {
      pass.dimension_order.push_back(rings[static_cast<std::size_t>((p + i) % d)]);
    }
    passes.push_back(std::move(pass));
  }
  return passes;
}

std::vector<TorusPass> bidirectional_torus_piece_passes(std::span<const int> dims,
                                                        std::int64_t count) {
  std::vector<TorusPass> passes = bidirectional_torus_passes(dims, count);
  const int pieces = static_cast<int>(passes.size());
  if (pieces == 1) return passes;  // one rank: nothing to split
  for (int p = 0; p < pieces; ++p) {
    TorusPass& pass = passes[static_cast<std::size_t>(p)];
    pass.begin = 0;
    pass.end = count;
    pass.shard_piece = p;
    pass.shard_pieces = pieces;
  }
  return passes;
}

}  // namespace spmd
