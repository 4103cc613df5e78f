#include "reference/context.h"

#include <fmt/format.h>

#include <exception>

#include "reference/check.h"
#include "reference/collective_groups.h"
#include "reference/collective_semantics.h"
#include "reference/elementwise.h"
#include "reference/reduction_dtype.h"

namespace spmd {
namespace {

CollectiveCall reduction(CollectiveOp op, const AxisNames& axes, Context::Groups groups) {
  CollectiveCall call;
  call.op = op;
  call.axes = axes;
  call.axis_index_groups = std::move(groups);
  return call;
}

CollectiveCall gather_call(const AxisNames& axes, int axis, bool tiled, Context::Groups groups) {
  CollectiveCall call = reduction(CollectiveOp::all_gather, axes, std::move(groups));
  call.axis = axis;
  call.tiled = tiled;
  return call;
}

CollectiveCall scatter_call(const AxisNames& axes, int scatter_dimension, bool tiled,
                            Context::Groups groups) {
  CollectiveCall call = reduction(CollectiveOp::psum_scatter, axes, std::move(groups));
  call.axis = scatter_dimension;
  call.tiled = tiled;
  return call;
}

CollectiveCall all_to_all_call(const AxisNames& axes, int split_axis, int concat_axis, bool tiled,
                               Context::Groups groups) {
  CollectiveCall call = reduction(CollectiveOp::all_to_all, axes, std::move(groups));
  call.split_axis = split_axis;
  call.concat_axis = concat_axis;
  call.tiled = tiled;
  return call;
}

CollectiveCall permute_call(const AxisNames& axes, std::vector<std::pair<int, int>> perm) {
  CollectiveCall call = reduction(CollectiveOp::ppermute, axes, std::nullopt);
  call.perm = std::move(perm);
  return call;
}

// An all-reduce in a program of one device: XLA replaces it by its operand (AllReduceSimplifier,
// and pmean's multiply by 1 is removed), so -0.0, NaN payloads and subnormals keep their bits;
// only the type changes as the collective's does. psum_scatter is not simplified and folds.
Array single_device_all_reduce(CollectiveOp op, const Array& x) {
  const Array result = convert(x, reduction_dtype(op, x.dtype()));
  if (op != CollectiveOp::pmean) return result;
  return pmean_from_sum(result, 1, kIeeeNumerics);  // n == 1: only the float type
}

// JAX: an empty axis tuple leaves x unchanged (not for permutes and all_to_all).
bool leaves_operand_unchanged(const CollectiveCall& call) {
  return call.axes.names.empty() && call.op != CollectiveOp::ppermute &&
         call.op != CollectiveOp::pshuffle && call.op != CollectiveOp::all_to_all;
}

std::shared_ptr<const StartedCall> describe(const CollectiveCall& call, DType dtype,
                                           const Shape& shape) {
  return std::make_shared<const StartedCall>(StartedCall{call, dtype, shape});
}

void check_stream(const StartOptions& options) {
  if (options.stream < -1) {
    throw Error(fmt::format("StartOptions::stream: {}, expected -1 (independent) or a stream "
                            "number >= 0",
                            options.stream));
  }
}

}  // namespace

Array Context::collective(const CollectiveCall& call, const Array& x) {
  return collective_start(call, x).wait();
}

void Context::collective_cost(const CollectiveCall& call, DType dtype, const Shape& shape) {
  collective_cost_start(call, dtype, shape).wait();
}

// The one place a collective is checked and handed to the backend; the blocking forms wait at
// once, so started and blocking collectives cannot differ in checks, numerics or types.
PendingCollective Context::collective_start(const CollectiveCall& call, const Array& x,
                                            StartOptions options) {
  throw_if_abandoned();
  validate_collective(call, mesh_, x, check_vma_, jax_version_);
  check_stream(options);
  const auto described = [&] { return describe(call, x.dtype(), x.shape()); };
  if (leaves_operand_unchanged(call)) return keep({{x, -1}, std::nullopt}, described());
  const VaryingAxes varying = result_varying_axes(call, mesh_, x.varying_axes());
  if (mesh_.device_count() == 1 && is_all_reduce(call.op)) {
    return keep({{single_device_all_reduce(call.op, x.as_stored()), -1}, varying}, described());
  }
  const bool sums = call.op == CollectiveOp::psum || call.op == CollectiveOp::pmean ||
                    call.op == CollectiveOp::psum_scatter;
  if (const Array* unrounded = x.unrounded_f32(); unrounded != nullptr && sums) {
    Pending pending = start_unrounded_bf16(call, *unrounded, options);
    pending.varying = varying;
    return keep(std::move(pending), described());
  }
  // Collectives move and reduce the stored (rounded) elements; a backend that hands an input
  // array on unchanged (a permute) must not hand its float32 values on with it.
  Started started = start_collective(call, x.as_stored(), options);
  auto what = started.call ? started.call : described();
  return keep({std::move(started), varying}, std::move(what));
}

// XLA:CPU promotes a bfloat16 sum to float32 (AllReducePromotion) and, with excess precision,
// feeds it the float32 values of the add / sub / mul before it: the float32 sum of `unrounded`,
// rounded once to bfloat16 (at wait). pmean rounds the sum, then scales it as for any bfloat16
// sum.
Context::Pending Context::start_unrounded_bf16(const CollectiveCall& call, const Array& unrounded,
                                               const StartOptions& options) {
  CollectiveCall sum = call;
  if (call.op == CollectiveOp::pmean) sum.op = CollectiveOp::psum;
  Pending pending;
  pending.started = start_collective(sum, unrounded, options);
  pending.finish =
      call.op == CollectiveOp::pmean ? Finish::round_to_bf16_then_mean : Finish::round_to_bf16;
  pending.axis_size = collective_axis_size(mesh_, call);
  return pending;
}

PendingCollective Context::collective_cost_start(const CollectiveCall& call, DType dtype,
                                                 const Shape& shape, StartOptions options) {
  throw_if_abandoned();
  validate_collective(call, mesh_, dtype, shape, check_vma_, jax_version_);
  check_stream(options);
  if (leaves_operand_unchanged(call)) {
    return keep({{Array(), -1}, std::nullopt}, describe(call, dtype, shape));
  }
  Started started = start_collective_cost(call, dtype, shape, options);
  auto what = started.call ? started.call : describe(call, dtype, shape);
  return keep({std::move(started), std::nullopt}, std::move(what));
}

PendingCollective Context::keep(Pending pending, std::shared_ptr<const StartedCall> what) {
  const std::uint64_t ticket = next_ticket_++;
  pending.what = what;
  pending_.emplace(ticket, std::move(pending));
  return PendingCollective(*this, ticket, std::move(what));
}

Array Context::wait(PendingCollective& handle) {
  if (handle.pending() && handle.context_ != this) {
    throw Error(fmt::format("wait: {} started on device {} waited on device {}; expected the "
                            "device that started it",
                            handle.what(), handle.context_->device(), device_));
  }
  return handle.wait();
}

Array Context::finish_wait(PendingCollective& handle) {
  if (std::this_thread::get_id() != owner_thread_) {
    throw Error(fmt::format("PendingCollective::wait: {} started on device {} waited on another "
                            "thread; expected the device that started it",
                            handle.what(), device_));
  }
  throw_if_abandoned();
  auto it = pending_.find(handle.ticket_);
  SPMD_CHECK(it != pending_.end(), "a pending handle whose Context does not know it");
  // The backend's wait first: if it refuses (another device's fiber), the handle stays pending.
  Array result = it->second.started.result ? std::move(*it->second.started.result)
                                           : wait_collective(it->second.started.id);
  const Pending pending = std::move(it->second);
  pending_.erase(it);
  handle.state_ = PendingCollective::State::waited;
  if (pending.finish != Finish::none) result = convert(result, DType::bfloat16);
  if (pending.finish == Finish::round_to_bf16_then_mean) {
    result = pmean_from_sum(result, pending.axis_size, numerics_);
  }
  if (pending.varying) result = result.with_varying_axes(*pending.varying);
  return result;
}

void Context::abandon(std::uint64_t ticket, const std::string& what) noexcept {
  pending_.erase(ticket);
  // A handle dropped while another error unwinds the device function: that error is the one to
  // report.
  if (std::uncaught_exceptions() > 0 || !abandoned_.empty()) return;
  abandoned_ = fmt::format("{} started on device {} was never waited (its PendingCollective was "
                           "dropped); expected wait() on every started collective",
                           what, device_);
}

void Context::throw_if_abandoned() const {
  if (!abandoned_.empty()) throw Error(abandoned_);
}

void Context::check_all_waited() {
  throw_if_abandoned();
  if (!pending_.empty()) {
    throw Error(fmt::format("{} started on device {} was never waited; expected wait() on every "
                            "started collective before the device function returns",
                            pending_.begin()->second.what->text(), device_));
  }
}

Context::Started Context::start_collective(const CollectiveCall& call, const Array& x,
                                           const StartOptions& options) {
  (void)options;
  return {run_collective(call, x), -1};
}

Context::Started Context::start_collective_cost(const CollectiveCall& call, DType dtype,
                                                const Shape& shape, const StartOptions& options) {
  (void)options;
  run_collective_cost(call, dtype, shape);
  return {Array(), -1};
}

Array Context::wait_collective(std::int64_t id) {
  SPMD_UNREACHABLE(fmt::format("wait_collective({}) on a backend whose starts finish at once", id));
}

Array Context::psum(const Array& x, const AxisNames& axes, Groups groups) {
  return collective(reduction(CollectiveOp::psum, axes, std::move(groups)), x);
}
Array Context::pmean(const Array& x, const AxisNames& axes, Groups groups) {
  return collective(reduction(CollectiveOp::pmean, axes, std::move(groups)), x);
}
Array Context::pmax(const Array& x, const AxisNames& axes, Groups groups) {
  return collective(reduction(CollectiveOp::pmax, axes, std::move(groups)), x);
}
Array Context::pmin(const Array& x, const AxisNames& axes, Groups groups) {
  return collective(reduction(CollectiveOp::pmin, axes, std::move(groups)), x);
}

Array Context::all_gather(const Array& x, const AxisNames& axes, int axis, bool tiled,
                          Groups groups) {
  return collective(gather_call(axes, axis, tiled, std::move(groups)), x);
}

Array Context::all_gather_invariant(const Array& x, const AxisNames& axes, int axis,
                                    bool tiled) {
  CollectiveCall call = gather_call(axes, axis, tiled, std::nullopt);
  call.to_invariant = true;
  return collective(call, x);
}

Array Context::psum_scatter(const Array& x, const AxisNames& axes, int scatter_dimension,
                            bool tiled, Groups groups) {
  return collective(scatter_call(axes, scatter_dimension, tiled, std::move(groups)), x);
}

Array Context::all_to_all(const Array& x, const AxisNames& axes, int split_axis, int concat_axis,
                          bool tiled, Groups groups) {
  return collective(all_to_all_call(axes, split_axis, concat_axis, tiled, std::move(groups)), x);
}

Array Context::ppermute(const Array& x, const AxisNames& axes,
                        std::vector<std::pair<int, int>> perm) {
  return collective(permute_call(axes, std::move(perm)), x);
}

PendingCollective Context::psum_start(const Array& x, const AxisNames& axes, Groups groups,
                                      StartOptions options) {
  return collective_start(reduction(CollectiveOp::psum, axes, std::move(groups)), x, options);
}
PendingCollective Context::pmean_start(const Array& x, const AxisNames& axes, Groups groups,
                                       StartOptions options) {
  return collective_start(reduction(CollectiveOp::pmean, axes, std::move(groups)), x, options);
}
PendingCollective Context::pmax_start(const Array& x, const AxisNames& axes, Groups groups,
                                      StartOptions options) {
  return collective_start(reduction(CollectiveOp::pmax, axes, std::move(groups)), x, options);
}
PendingCollective Context::pmin_start(const Array& x, const AxisNames& axes, Groups groups,
                                      StartOptions options) {
  return collective_start(reduction(CollectiveOp::pmin, axes, std::move(groups)), x, options);
}
PendingCollective Context::all_gather_start(const Array& x, const AxisNames& axes, int axis,
                                            bool tiled, Groups groups, StartOptions options) {
  return collective_start(gather_call(axes, axis, tiled, std::move(groups)), x, options);
}
PendingCollective Context::psum_scatter_start(const Array& x, const AxisNames& axes,
                                              int scatter_dimension, bool tiled, Groups groups,
                                              StartOptions options) {
  return collective_start(scatter_call(axes, scatter_dimension, tiled, std::move(groups)), x,
                          options);
}
PendingCollective Context::all_to_all_start(const Array& x, const AxisNames& axes, int split_axis,
                                            int concat_axis, bool tiled, Groups groups,
                                            StartOptions options) {
  return collective_start(
      all_to_all_call(axes, split_axis, concat_axis, tiled, std::move(groups)), x, options);
}
PendingCollective Context::ppermute_start(const Array& x, const AxisNames& axes,
                                          std::vector<std::pair<int, int>> perm,
                                          StartOptions options) {
  return collective_start(permute_call(axes, std::move(perm)), x, options);
}

Array Context::pshuffle(const Array& x, const AxisNames& axes, std::vector<int> perm) {
  CollectiveCall call = reduction(CollectiveOp::pshuffle, axes, std::nullopt);
  call.shuffle = std::move(perm);
  return collective(call, x);
}

Array Context::axis_index(const AxisNames& axes) {
  CollectiveCall call = reduction(CollectiveOp::axis_index, axes, std::nullopt);
  // The value first: it names an unbound axis in a NameError, which result_varying_axes cannot
  // (it would shift by the missing axis's position, -1; UBSan found it).
  Array value = axis_index_value(mesh_, axes, device_);
  return value.with_varying_axes(result_varying_axes(call, mesh_, 0));
}

int Context::axis_size(const AxisNames& axes) const {
  resolve_axes(mesh_, axes, "axis_size");
  return collective_axis_size(mesh_, reduction(CollectiveOp::psum, axes, std::nullopt));
}

Values Context::each_leaf(const Values& xs, const CollectiveCall& call) {
  Values out;
  out.reserve(xs.size());
  for (const Array& x : xs) out.push_back(collective(call, x));
  return out;
}

Values Context::psum(const Values& xs, const AxisNames& axes, Groups groups) {
  return each_leaf(xs, reduction(CollectiveOp::psum, axes, std::move(groups)));
}
Values Context::pmean(const Values& xs, const AxisNames& axes, Groups groups) {
  return each_leaf(xs, reduction(CollectiveOp::pmean, axes, std::move(groups)));
}
Values Context::pmax(const Values& xs, const AxisNames& axes, Groups groups) {
  return each_leaf(xs, reduction(CollectiveOp::pmax, axes, std::move(groups)));
}
Values Context::pmin(const Values& xs, const AxisNames& axes, Groups groups) {
  return each_leaf(xs, reduction(CollectiveOp::pmin, axes, std::move(groups)));
}

}  // namespace spmd
