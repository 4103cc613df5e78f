#pragma once
// The reference backend: obviously correct, no cost model. Each device runs on its own thread;
// each collective is computed in one place from all inputs (collective_semantics.h), with float
// sums folded in a declared order (XLA:CPU's by default).

#include <limits>

#include "reference/backend.h"
#include "reference/reduction_order.h"

namespace spmd {

class ReferenceBackend : public Backend {
 public:
  explicit ReferenceBackend(ReductionOrder order = {},
                            int device_count = std::numeric_limits<int>::max())
      : order_(std::move(order)), device_count_(device_count) {}

  std::string name() const override { return "reference"; }
  int device_count() const override { return device_count_; }
  const ReductionOrder& order() const { return order_; }

  std::vector<Values> run(const Mesh& mesh, const std::vector<Values>& inputs,
                          const DeviceFunction& function, bool check_vma) override;

 private:
  ReductionOrder order_;
  int device_count_;
};

}  // namespace spmd
