#pragma once
// spmd::Context: what a per-device function sees. It names the device and the mesh, and it is how
// the function calls collectives by axis name, as jax.lax does inside pmap / shard_map. Each
// backend supplies the one virtual that carries a collective out; the checks and the result
// types are the same for every backend.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "reference/array.h"
#include "reference/collective_call.h"
#include "reference/float_numerics.h"
#include "reference/jax_version.h"
#include "reference/mesh.h"
#include "reference/pending_collective.h"

namespace spmd {

// A pytree of arrays, flattened: per-device functions take and return lists of leaves.
using Values = std::vector<Array>;

class Context {
 public:
  Context(const Mesh& mesh, int device, bool check_vma, FloatNumerics numerics = kIeeeNumerics)
      : mesh_(mesh),
        device_(device),
        check_vma_(check_vma),
        numerics_(numerics),
        owner_thread_(std::this_thread::get_id()) {}
  virtual ~Context() = default;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int device() const { return device_; }
  const Mesh& mesh() const { return mesh_; }
  bool check_vma() const { return check_vma_; }
  // The JAX release whose checks the collectives make (reference/jax_version.h). pmap and
  // shard_map set it from their options on every device before the function runs.
  JaxVersion jax_version() const { return jax_version_; }
  void set_jax_version(JaxVersion version) { jax_version_ = version; }
  // The backend's arithmetic: element-wise operations in the device function take it
  // (spmd::add(a, b, ctx.numerics()), ...) so that they round as the collectives do.
  const FloatNumerics& numerics() const { return numerics_; }

  using Groups = std::optional<AxisIndexGroups>;

  Array psum(const Array& x, const AxisNames& axes, Groups groups = std::nullopt);
  Array pmean(const Array& x, const AxisNames& axes, Groups groups = std::nullopt);
  Array pmax(const Array& x, const AxisNames& axes, Groups groups = std::nullopt);
  Array pmin(const Array& x, const AxisNames& axes, Groups groups = std::nullopt);
  Array all_gather(const Array& x, const AxisNames& axes, int axis = 0, bool tiled = false,
                   Groups groups = std::nullopt);
  // all_gather(to='invarying') / all_gather_invariant: the same values, typed invariant along
  // `axes`, so an out_spec may omit them under check_vma.
  Array all_gather_invariant(const Array& x, const AxisNames& axes, int axis = 0,
                             bool tiled = false);
  Array psum_scatter(const Array& x, const AxisNames& axes, int scatter_dimension = 0,
                     bool tiled = false, Groups groups = std::nullopt);
  Array all_to_all(const Array& x, const AxisNames& axes, int split_axis, int concat_axis,
                   bool tiled = false, Groups groups = std::nullopt);
  // pswapaxes(x, axes, axis) == all_to_all(x, axes, axis, axis) (jax.lax.pswapaxes).
  Array pswapaxes(const Array& x, const AxisNames& axes, int axis, Groups groups = std::nullopt) {
    return all_to_all(x, axes, axis, axis, /*tiled=*/false, std::move(groups));
  }
  Array ppermute(const Array& x, const AxisNames& axes, std::vector<std::pair<int, int>> perm);
  Array pshuffle(const Array& x, const AxisNames& axes, std::vector<int> perm);
  Array axis_index(const AxisNames& axes);
  int axis_size(const AxisNames& axes) const;

  // Pytrees: the collective applied leaf by leaf, one collective call per leaf.
  Values psum(const Values& xs, const AxisNames& axes, Groups groups = std::nullopt);
  Values pmean(const Values& xs, const AxisNames& axes, Groups groups = std::nullopt);
  Values pmax(const Values& xs, const AxisNames& axes, Groups groups = std::nullopt);
  Values pmin(const Values& xs, const AxisNames& axes, Groups groups = std::nullopt);

  // Modeled costs, for backends with a cost model (the simulator); others ignore them.
  // Local work: the simulator charges max(flops / peak FLOP/s, bytes / memory bandwidth) of
  // virtual time (a roofline).
  virtual void charge_compute(double flops, std::int64_t bytes_moved) {
    (void)flops;
    (void)bytes_moved;
  }
  // Memory the program holds on this device (parameters, activations, ...), from now until the
  // matching release; `what` names it in out-of-memory errors.
  virtual void hold_memory(std::int64_t bytes, const std::string& what) {
    (void)bytes;
    (void)what;
  }
  virtual void release_memory(std::int64_t bytes) { (void)bytes; }
  // A collective's time and memory without its data, for sizes too large to hold: checked like
  // `collective`, then carried out by the simulator with no data; others do nothing.
  void collective_cost(const CollectiveCall& call, DType dtype, const Shape& shape);

  // Any collective from its description: checks it, runs it on the backend, types the result.
  // On a mesh of one device psum, pmean, pmax and pmin return their operand without folding it
  // (XLA removes a single-replica all-reduce). A bfloat16 operand that carries its float32 value
  // (Array::unrounded_f32, FloatNumerics::bf16_excess_precision) is summed in float32 by psum,
  // pmean and psum_scatter, rounded once at the end. Exactly collective_start(call, x).wait().
  Array collective(const CollectiveCall& call, const Array& x);

  // ---- Started collectives (XLA's all-reduce-start / all-reduce-done)
  // The same checks, numerics and result as the blocking form; the result is handed over by
  // PendingCollective::wait (reference/pending_collective.h: one wait per start, on this
  // device). Every device starts the same collectives in the same order, as for blocking ones.
  // On the simulator the device goes on with its own work while the collective runs; on other
  // backends the collective is carried out at once and wait() returns the kept result.
  PendingCollective collective_start(const CollectiveCall& call, const Array& x,
                                     StartOptions options = {});
  PendingCollective collective_cost_start(const CollectiveCall& call, DType dtype,
                                          const Shape& shape, StartOptions options = {});
  PendingCollective psum_start(const Array& x, const AxisNames& axes,
                               Groups groups = std::nullopt, StartOptions options = {});
  PendingCollective pmean_start(const Array& x, const AxisNames& axes,
                                Groups groups = std::nullopt, StartOptions options = {});
  PendingCollective pmax_start(const Array& x, const AxisNames& axes,
                               Groups groups = std::nullopt, StartOptions options = {});
  PendingCollective pmin_start(const Array& x, const AxisNames& axes,
                               Groups groups = std::nullopt, StartOptions options = {});
  PendingCollective all_gather_start(const Array& x, const AxisNames& axes, int axis = 0,
                                     bool tiled = false, Groups groups = std::nullopt,
                                     StartOptions options = {});
  PendingCollective psum_scatter_start(const Array& x, const AxisNames& axes,
                                       int scatter_dimension = 0, bool tiled = false,
                                       Groups groups = std::nullopt, StartOptions options = {});
  PendingCollective all_to_all_start(const Array& x, const AxisNames& axes, int split_axis,
                                     int concat_axis, bool tiled = false,
                                     Groups groups = std::nullopt, StartOptions options = {});
  PendingCollective ppermute_start(const Array& x, const AxisNames& axes,
                                   std::vector<std::pair<int, int>> perm,
                                   StartOptions options = {});
  // handle.wait(), checking that `handle` was started on this Context.
  Array wait(PendingCollective& handle);
  // Called by backends when the device function has returned: spmd::Error if a started
  // collective was never waited.
  void check_all_waited();

 protected:
  // Carries out a checked collective; every device of the mesh calls it in the same order.
  virtual Array run_collective(const CollectiveCall& call, const Array& x) = 0;
  // The same without data (collective_cost); only backends with a cost model do anything.
  virtual void run_collective_cost(const CollectiveCall& call, DType dtype, const Shape& shape) {
    (void)call;
    (void)dtype;
    (void)shape;
  }

  // A checked collective as a backend starts it: either its result at once, or the backend's
  // own id for it, handed to wait_collective later. The defaults carry the collective out at
  // once (run_collective / run_collective_cost), which is valid on every backend because every
  // device starts the same collectives in the same order: existing backends need nothing more.
  struct Started {
    std::optional<Array> result;
    std::int64_t id = -1;
    // Optional: the backend's own record of exactly this call, element type and shape, which
    // the handle then shares instead of copying the call (the simulator keeps one per collective).
    std::shared_ptr<const StartedCall> call;
  };
  virtual Started start_collective(const CollectiveCall& call, const Array& x,
                                   const StartOptions& options);
  virtual Started start_collective_cost(const CollectiveCall& call, DType dtype,
                                        const Shape& shape, const StartOptions& options);
  // The result of a collective whose start returned `id`; called once per id.
  virtual Array wait_collective(std::int64_t id);

 private:
  friend class PendingCollective;
  // What wait() still has to do to a started collective's raw result.
  enum class Finish { none, round_to_bf16, round_to_bf16_then_mean };
  struct Pending {
    Started started;
    std::optional<VaryingAxes> varying;  // the result's type; unset: the operand's, unchanged
    Finish finish = Finish::none;
    int axis_size = 1;  // pmean's n
    std::shared_ptr<const StartedCall> what;  // for errors
  };

  Values each_leaf(const Values& xs, const CollectiveCall& call);
  Pending start_unrounded_bf16(const CollectiveCall& call, const Array& unrounded,
                               const StartOptions& options);
  PendingCollective keep(Pending pending, std::shared_ptr<const StartedCall> what);
  Array finish_wait(PendingCollective& handle);
  void abandon(std::uint64_t ticket, const std::string& what) noexcept;
  void throw_if_abandoned() const;

  const Mesh& mesh_;
  int device_;
  bool check_vma_;
  JaxVersion jax_version_ = kDefaultJaxVersion;
  FloatNumerics numerics_;
  std::thread::id owner_thread_;            // the thread the device function runs on
  std::map<std::uint64_t, Pending> pending_;  // started and not waited, by ticket
  std::uint64_t next_ticket_ = 0;
  std::string abandoned_;  // the first dropped handle's error, raised at the next operation
};

// The per-device program: the device's arguments in, its results out.
using DeviceFunction = std::function<Values(Context&, const Values&)>;

// `function` run after setting each device's Context to `version`: how pmap and shard_map pass
// their options' jax_version to every backend. The result refers to `function`, which must
// outlive it.
inline DeviceFunction with_jax_version(const DeviceFunction& function, JaxVersion version) {
  return [&function, version](Context& ctx, const Values& inputs) {
    ctx.set_jax_version(version);
    return function(ctx, inputs);
  };
}

}  // namespace spmd
