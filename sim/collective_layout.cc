#include "sim/collective_layout.h"

#include "reference/error.h"

namespace spmd::sim {
namespace {

Array flatten(const Array& a) { return reshape(a, {a.size()}); }

// The n pieces of `flat`, each reshaped to `shape`.
std::vector<Array> pieces(const Array& flat, int n, const Shape& shape) {
  const std::int64_t each = flat.size() / n;
  std::vector<Array> out;
  for (int k = 0; k < n; ++k) out.push_back(reshape(slice(flat, 0, k * each, (k + 1) * each), shape));
  return out;
}

Array concat_flat(const std::vector<Array>& blocks) {
  std::vector<Array> flats;
  for (const Array& b : blocks) flats.push_back(flatten(b));
  return concatenate(flats, 0);
}

// The n blocks of x along `axis` (tiled: slices of size/n; untiled: takes of index k).
std::vector<Array> blocks_along(const Array& x, int axis, int n, bool tiled) {
  std::vector<Array> blocks;
  const std::int64_t length = x.dim(axis) / n;
  for (int k = 0; k < n; ++k) {
    blocks.push_back(tiled ? slice(x, axis, k * length, (k + 1) * length) : take(x, axis, k));
  }
  return blocks;
}

}  // namespace

collectives::CollectiveKind collective_kind(CollectiveOp op) {
  using collectives::CollectiveKind;
  switch (op) {
    case CollectiveOp::psum:
    case CollectiveOp::pmean:
    case CollectiveOp::pmax:
    case CollectiveOp::pmin: return CollectiveKind::all_reduce;
    case CollectiveOp::psum_scatter: return CollectiveKind::reduce_scatter;
    case CollectiveOp::all_gather: return CollectiveKind::all_gather;
    case CollectiveOp::all_to_all: return CollectiveKind::all_to_all;
    case CollectiveOp::ppermute:
    case CollectiveOp::pshuffle: return CollectiveKind::permute;
    case CollectiveOp::axis_index: break;
  }
  throw Error("collective_kind: axis_index is local, not a collective");
}

Array flat_input(const CollectiveCall& call, const Array& x, int n) {
  switch (call.op) {
    case CollectiveOp::psum_scatter: {
      // Untiled blocks keep their axis here (size 1); unflatten_result removes it.
      const int d = normalize_axis(call.axis, x.rank(), "scatter_dimension");
      return concat_flat(blocks_along(x, d, n, /*tiled=*/true));
    }
    case CollectiveOp::all_to_all: {
      const int split = normalize_axis(call.split_axis, x.rank(), "split_axis");
      return concat_flat(blocks_along(x, split, n, call.tiled));
    }
    default: return flatten(x);
  }
}

Array unflatten_result(const CollectiveCall& call, const Array& flat, const Array& x, int n) {
  switch (call.op) {
    case CollectiveOp::all_gather: {
      std::vector<Array> parts = pieces(flat, n, x.shape());
      return call.tiled ? concatenate(parts, normalize_axis(call.axis, x.rank(), "axis"))
                        : stack(parts, normalize_axis(call.axis, x.rank() + 1, "axis"));
    }
    case CollectiveOp::psum_scatter: {
      const int d = normalize_axis(call.axis, x.rank(), "scatter_dimension");
      Shape block_shape = x.shape();
      block_shape[static_cast<std::size_t>(d)] /= n;
      const Array block = reshape(flat, block_shape);
      return call.tiled ? block : squeeze(block, d);
    }
    case CollectiveOp::all_to_all: {
      const int split = normalize_axis(call.split_axis, x.rank(), "split_axis");
      const int concat = normalize_axis(call.concat_axis, x.rank(), "concat_axis");
      const Array one_block = blocks_along(x, split, n, call.tiled).front();
      std::vector<Array> parts = pieces(flat, n, one_block.shape());
      return call.tiled ? concatenate(parts, concat) : stack(parts, concat);
    }
    default: return reshape(flat, x.shape());
  }
}

std::vector<std::pair<int, int>> permutation_pairs(const CollectiveCall& call, int n) {
  auto mod = [n](int i) { return ((i % n) + n) % n; };
  std::vector<std::pair<int, int>> pairs;
  if (call.op == CollectiveOp::ppermute) {
    for (auto [source, destination] : call.perm) pairs.emplace_back(mod(source), mod(destination));
  } else {
    for (std::size_t i = 0; i < call.shuffle.size(); ++i) {
      pairs.emplace_back(mod(call.shuffle[i]), mod(static_cast<int>(i)));
    }
  }
  return pairs;
}

}  // namespace spmd::sim
