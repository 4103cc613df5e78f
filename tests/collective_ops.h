#pragma once
// One collective of each kind over axes, blocking or started, for tests that run random
// programs: shapes are the caller's to fit (tiled scatters and gathers along axis 0), and
// ppermute shifts every rank to the next (Shift::cycle), or all but the last (Shift::open: one
// device receives nothing, so zeros).

#include <utility>
#include <vector>

#include "reference/context.h"

namespace spmd::test_ops {

enum class Op { psum, pmean, pmax, pmin, psum_scatter, all_gather, all_to_all, ppermute };

enum class Shift { cycle, open };

inline std::vector<std::pair<int, int>> shift_perm(int n, Shift shift = Shift::cycle) {
  std::vector<std::pair<int, int>> perm;
  for (int i = 0; i < n; ++i) perm.emplace_back(i, (i + 1) % n);
  if (shift == Shift::open && n > 2) perm.pop_back();
  return perm;
}

inline Array apply(Context& ctx, Op op, const Array& x, const AxisNames& axes, int n,
                   Shift shift = Shift::cycle) {
  switch (op) {
    case Op::psum: return ctx.psum(x, axes);
    case Op::pmean: return ctx.pmean(x, axes);
    case Op::pmax: return ctx.pmax(x, axes);
    case Op::pmin: return ctx.pmin(x, axes);
    case Op::psum_scatter: return ctx.psum_scatter(x, axes, 0, true);
    case Op::all_gather: return ctx.all_gather(x, axes, 0, true);
    case Op::all_to_all: return ctx.all_to_all(x, axes, 0, 0, true);
    case Op::ppermute: return ctx.ppermute(x, axes, shift_perm(n, shift));
  }
  return x;
}

inline PendingCollective start(Context& ctx, Op op, const Array& x, const AxisNames& axes, int n,
                               StartOptions options) {
  switch (op) {
    case Op::psum: return ctx.psum_start(x, axes, std::nullopt, options);
    case Op::pmean: return ctx.pmean_start(x, axes, std::nullopt, options);
    case Op::pmax: return ctx.pmax_start(x, axes, std::nullopt, options);
    case Op::pmin: return ctx.pmin_start(x, axes, std::nullopt, options);
    case Op::psum_scatter: return ctx.psum_scatter_start(x, axes, 0, true, std::nullopt, options);
    case Op::all_gather: return ctx.all_gather_start(x, axes, 0, true, std::nullopt, options);
    case Op::all_to_all: return ctx.all_to_all_start(x, axes, 0, 0, true, std::nullopt, options);
    case Op::ppermute: return ctx.ppermute_start(x, axes, shift_perm(n), options);
  }
  return {};
}

}  // namespace spmd::test_ops
