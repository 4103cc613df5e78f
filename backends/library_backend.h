#pragma once
// A spmd::Backend from a collective library's five group operations (group_collectives.h):
// devices are threads meeting at a Rendezvous, as in the reference backend, but every
// collective's data movement and reductions are the library's. This file does the rest of what
// JAX means by each collective, the same way for every library: groups from axes and
// axis_index_groups, packing blocks along the scatter, split and concat axes into flat buffers
// and back, bool sums in int32, pmean's scaling.

#include <memory>
#include <string>
#include <vector>

#include "backends/group_collectives.h"
#include "reference/backend.h"
#include "reference/collective_call.h"
#include "reference/float_numerics.h"
#include "reference/mesh.h"

namespace spmd {

// Every device's result of `call` (index = device id) from every device's input, with the
// library's operations: what evaluate_collective (reference/collective_semantics.h) gives when
// the library reduces in the order the reference folds in. `numerics` rounds pmean's multiply.
std::vector<Array> evaluate_with_library(GroupCollectives& library, const CollectiveCall& call,
                                         const Mesh& mesh, const std::vector<Array>& inputs,
                                         const FloatNumerics& numerics);

class LibraryBackend : public Backend {
 public:
  // `name` for messages; `device_count` devices; element-wise work and pmean round as `numerics`.
  LibraryBackend(std::string name, int device_count, std::shared_ptr<GroupCollectives> library,
                 FloatNumerics numerics = kIeeeNumerics)
      : name_(std::move(name)),
        device_count_(device_count),
        library_(std::move(library)),
        numerics_(numerics) {}

  std::string name() const override { return name_; }
  int device_count() const override { return device_count_; }
  std::vector<Values> run(const Mesh& mesh, const std::vector<Values>& inputs,
                          const DeviceFunction& function, bool check_vma) override;

 private:
  std::string name_;
  int device_count_;
  std::shared_ptr<GroupCollectives> library_;
  FloatNumerics numerics_;
};

}  // namespace spmd
