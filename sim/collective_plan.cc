#include "sim/collective_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "collectives/schedule_data.h"
#include "reference/collective_semantics.h"
#include "reference/elementwise.h"
#include "reference/error.h"
#include "reference/reduction_dtype.h"
#include "reference/ring_order.h"
#include "support/checked_math.h"
#include "sim/collective_layout.h"

namespace spmd::sim {
namespace {

using collectives::Algorithm;
using collectives::CollectiveKind;

// The group's ranks in the order the topology's ring visits their devices; rank order where the
// ring misses one of them.
std::vector<int> topology_group_ring(const DeviceRing& ring_order,
                                     const std::vector<int>& devices) {
  std::vector<int> ring = ring_order.group_ring(devices);
  return ring.size() == devices.size() ? ring : std::vector<int>{};
}

ReduceOp reduce_op(const CollectiveCall& call, DType dtype) {
  switch (call.op) {
    case CollectiveOp::psum:
    case CollectiveOp::pmean:
    case CollectiveOp::pmax:
    case CollectiveOp::pmin:
    case CollectiveOp::psum_scatter: return reduction_op(call.op, dtype);
    default: return ReduceOp::max;  // data movement only; max accepts every dtype
  }
}

// `op` is reduce_op's: sum only for psum, pmean and psum_scatter, and not for bool.
DType work_dtype(const CollectiveCall& call, DType dtype, ReduceOp op, Algorithm algorithm) {
  const DType reduced = reduction_dtype(call.op, dtype);
  // XLA:CPU's AllReducePromotion: the direct algorithm folds in its order.
  const bool sums = op == ReduceOp::sum;
  if (sums && reduced == DType::bfloat16 && algorithm == Algorithm::direct) return DType::float32;
  return reduced;
}

Algorithm pick_algorithm(const collectives::CollectiveShape& shape, const AlgorithmChoice& choice,
                         std::string& note) {
  const std::optional<Algorithm> requested = choice.forced ? choice.forced : choice.for_kind;
  if (!requested) return collectives::choose_algorithm(shape, choice.topology_traits);
  if (collectives::supports(*requested, shape)) return *requested;
  // A ring where the requested algorithm cannot run; the reference orders of the simulator's
  // algorithms fold as nccl_ring there too (reference/reduction_order.h).
  const Algorithm instead =
      collectives::supports(Algorithm::ring, shape) ? Algorithm::ring : Algorithm::direct;
  note = fmt::format("{} cannot run {} over {} ranks; used {}",
                     collectives::algorithm_name(*requested),
                     collectives::collective_kind_name(shape.kind), shape.ranks,
                     collectives::algorithm_name(instead));
  return instead;
}

// The schedules keep a record per pipeline piece: a machine's pipeline_chunk so small that one
// collective splits into tens of millions of pieces would take gigabytes of host memory (a
// 1 GiB all-reduce in 1-byte pieces: 9 GB) for no finer answer.
constexpr std::int64_t kMaxPipelinePieces = std::int64_t{1} << 24;

void check_pipeline_pieces(const CollectiveCall& call, std::int64_t bytes,
                           const collectives::CollectiveShape& shape) {
  const std::int64_t piece_bytes = std::max(shape.pipeline_chunk_bytes, shape.element_bytes);
  const std::int64_t pieces = bytes / piece_bytes + (bytes % piece_bytes != 0);
  if (pieces <= kMaxPipelinePieces) return;
  throw Error(fmt::format(
      "pipeline_chunk {} B: {} of {} B would split into {} pieces, expected at most {} per "
      "collective (a pipeline_chunk of at least {} B)",
      shape.pipeline_chunk_bytes, call.to_string(), bytes, pieces, kMaxPipelinePieces,
      (bytes + kMaxPipelinePieces - 1) / kMaxPipelinePieces));
}

}  // namespace

CollectivePlan plan_collective(const CollectiveCall& call, DType dtype, const Shape& shape,
                               const PlacedGroup& group, int axis_size,
                               const AlgorithmChoice& choice) {
  CollectivePlan plan;
  const int n = static_cast<int>(group.devices.size());
  for (std::int64_t d : shape) {
    if (d < 0) {
      throw Error(fmt::format("{}: shape {} has a negative dimension, expected sizes >= 0",
                              call.to_string(), shape_to_string(shape)));
    }
  }
  const std::int64_t elements = element_count(shape);
  plan.input_dtype = dtype;
  plan.axis_size = axis_size;
  plan.op = reduce_op(call, dtype);
  plan.shape.kind = collective_kind(call.op);
  plan.shape.ranks = n;
  plan.shape.elements = elements;
  if (!choice.ring_by_rank) {
    plan.shape.ring = topology_group_ring(choice.ring_order, group.devices);
  }
  plan.shape.torus_dims = group.grid_dims;
  plan.shape.pipeline_chunk_bytes = choice.pipeline_chunk_bytes;
  if (plan.shape.kind == CollectiveKind::permute) {
    plan.shape.permutation = permutation_pairs(call, n);
  }
  // The element width decides the algorithm only through sizes; pick it from the input type,
  // then fix the work type (which depends on the algorithm) and its width.
  plan.shape.element_bytes = static_cast<std::int64_t>(dtype_size_bytes(dtype));
  plan.algorithm = pick_algorithm(plan.shape, choice, plan.algorithm_note);
  plan.work_dtype = work_dtype(call, dtype, plan.op, plan.algorithm);
  plan.shape.element_bytes = static_cast<std::int64_t>(dtype_size_bytes(plan.work_dtype));
  // The group's bytes bound every offset, byte count and chunk count of the schedules (and every
  // transfer's elements × width): checked once here rather than at each product.
  const auto what = [&] {
    return fmt::format("bytes of {} of shape {} over {} devices", call.to_string(),
                       shape_to_string(shape), n);
  };
  const std::int64_t bytes = checked_multiply(elements, plan.shape.element_bytes, what);
  checked_multiply(bytes, n, what);
  check_pipeline_pieces(call, bytes, plan.shape);
  return plan;
}

std::vector<Array> group_results(const CollectiveCall& call, const CollectivePlan& plan,
                                 const collectives::Schedule& schedule,
                                 const std::vector<Array>& inputs, const FloatNumerics& numerics,
                                 const ScheduleExecutor& execute) {
  const int n = plan.shape.ranks;
  std::vector<Array> flat;
  flat.reserve(inputs.size());
  for (const Array& x : inputs) {
    Array f = flat_input(call, x, n);
    flat.push_back(f.dtype() == plan.work_dtype ? f : convert(f, plan.work_dtype));
  }
  std::vector<Array> flat_results = execute(schedule, flat, plan.op, numerics);
  std::vector<Array> results;
  results.reserve(inputs.size());
  for (std::size_t r = 0; r < inputs.size(); ++r) {
    Array result = unflatten_result(call, flat_results[r], inputs[r], n);
    const bool promoted_bf16 =
        plan.work_dtype == DType::float32 && plan.input_dtype == DType::bfloat16;
    if (promoted_bf16) result = convert(result, DType::bfloat16);  // one rounding at the end
    if (call.op == CollectiveOp::pmean) {
      result = pmean_from_sum(result, plan.axis_size, numerics);
    }
    // Members with the same result share one array (reductions): convert only once.
    if (r > 0 && flat_results[r].shares_storage_with(flat_results[r - 1]) &&
        results.back().dtype() == result.dtype()) {
      results.push_back(results.back());
      continue;
    }
    results.push_back(std::move(result));
  }
  return results;
}

std::pair<DType, Shape> result_type(const CollectiveCall& call, DType dtype, const Shape& shape,
                                    int n) {
  Shape out = shape;
  switch (call.op) {
    case CollectiveOp::psum: return {reduction_dtype(call.op, dtype), out};
    case CollectiveOp::pmean: return {is_floating(dtype) ? dtype : DType::float32, out};
    case CollectiveOp::all_gather: {
      const int rank = static_cast<int>(shape.size());
      if (call.tiled) {
        out[static_cast<std::size_t>(normalize_axis(call.axis, rank, "axis"))] *= n;
      } else {
        out.insert(out.begin() + normalize_axis(call.axis, rank + 1, "axis"), n);
      }
      return {dtype, out};
    }
    case CollectiveOp::psum_scatter: {
      const int d = normalize_axis(call.axis, static_cast<int>(shape.size()), "scatter_dimension");
      if (call.tiled) out[static_cast<std::size_t>(d)] /= n;
      else out.erase(out.begin() + d);
      return {dtype, out};
    }
    case CollectiveOp::all_to_all: {
      const int rank = static_cast<int>(shape.size());
      const int split = normalize_axis(call.split_axis, rank, "split_axis");
      const int concat = normalize_axis(call.concat_axis, rank, "concat_axis");
      if (call.tiled) {
        out[static_cast<std::size_t>(split)] /= n;
        out[static_cast<std::size_t>(concat)] *= n;
      } else {
        out.erase(out.begin() + split);
        out.insert(out.begin() + concat, n);
      }
      return {dtype, out};
    }
    default: return {dtype, out};
  }
}

Array zero_result(const CollectiveCall& call, const Array& input, int n) {
  auto [dtype, shape] = result_type(call, input.dtype(), input.shape(), n);
  return Array(dtype, shape);
}

}  // namespace spmd::sim
