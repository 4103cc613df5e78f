#include "conformance/unspecified_order.h"

#include <mutex>

#include "reference/collective_groups.h"
#include "reference/collective_semantics.h"
#include "reference/device_threads.h"
#include "reference/exact_in_any_order.h"
#include "reference/reduction_dtype.h"

namespace spmd::conformance {
namespace {

bool reduces(CollectiveOp op) { return is_all_reduce(op) || op == CollectiveOp::psum_scatter; }

// The first element of `call`'s reductions over `inputs` (by device id) that is not exact in any
// order, group by group.
std::optional<InexactReduction> inexact_reduction(const CollectiveCall& call, const Mesh& mesh,
                                                  const std::vector<Array>& inputs) {
  for (const std::vector<int>& group : collective_groups(mesh, call)) {
    std::vector<Array> contributions;
    for (int device : group) contributions.push_back(inputs[static_cast<std::size_t>(device)]);
    const ReduceOp op = reduction_op(call.op, contributions.front().dtype());
    if (const auto element = first_element_not_exact_in_any_order(contributions, op)) {
      return InexactReduction{call.to_string(), op, group, *element};
    }
  }
  return std::nullopt;
}

// The reference folding in `order`, each reduction's values checked before it is evaluated; the
// first that is not exact in any order is kept.
class ExactnessCheckingBackend final : public Backend {
 public:
  ExactnessCheckingBackend(ReductionOrder order, int device_count)
      : order_(std::move(order)), device_count_(device_count) {}

  std::string name() const override { return "reference (exact in any order check)"; }
  int device_count() const override { return device_count_; }

  std::vector<Values> run(const Mesh& mesh, const std::vector<Values>& inputs,
                          const DeviceFunction& function, bool check_vma) override {
    Rendezvous rendezvous(mesh, [&](const CollectiveCall& call, const std::vector<Array>& values) {
      if (reduces(call.op)) keep_first(inexact_reduction(call, mesh, values));
      return evaluate_collective(call, mesh, values, order_);
    });
    return run_devices_on_threads(name(), mesh, inputs, function, check_vma, rendezvous,
                                  order_.numerics());
  }

  std::optional<InexactReduction> first_inexact() {
    const std::lock_guard lock(mutex_);
    return first_inexact_;
  }

 private:
  void keep_first(std::optional<InexactReduction> inexact) {
    const std::lock_guard lock(mutex_);
    if (!first_inexact_) first_inexact_ = std::move(inexact);
  }

  ReductionOrder order_;
  int device_count_;
  std::mutex mutex_;
  std::optional<InexactReduction> first_inexact_;
};

}  // namespace

std::optional<InexactReduction> first_reduction_not_exact_in_any_order(
    const Case& c, const ReductionOrder& order) {
  ExactnessCheckingBackend backend(order, c.device_count);
  try {
    run_body(backend, c);
  } catch (const Error&) {
    // The caller's own run of the case reports the error.
  }
  return backend.first_inexact();
}

}  // namespace spmd::conformance
