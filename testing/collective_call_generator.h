#pragma once
// A RapidCheck generator of collective calls that JAX accepts for a given operand on a given mesh
// (docs/testing.md): every operation of reference/collective_call.h, over random subsets of the
// mesh's axes in random order, with axis_index_groups where JAX takes them, tiled and untiled
// forms, and axes written negative as well as positive. The call is valid by construction; the
// checks it is built to pass are reference/collective_semantics.h's validate_collective.

#include <rapidcheck.h>

#include <vector>

#include "reference/array.h"
#include "reference/collective_call.h"
#include "reference/mesh.h"

namespace spmd::testkit {

// The operand a generated collective is called on, as the device function sees it.
struct Operand {
  DType dtype = DType::float32;
  Shape shape;
  // The mesh axes it varies over (shard_map's type, checked under check_vma).
  VaryingAxes varying = 0;
};

inline const std::vector<CollectiveOp>& all_collective_ops() {
  static const std::vector<CollectiveOp> ops = {
      CollectiveOp::psum,       CollectiveOp::pmean,      CollectiveOp::pmax,
      CollectiveOp::pmin,       CollectiveOp::all_gather, CollectiveOp::psum_scatter,
      CollectiveOp::all_to_all, CollectiveOp::ppermute,   CollectiveOp::pshuffle,
      CollectiveOp::axis_index};
  return ops;
}

struct CollectiveCallOptions {
  // The operations to draw from; those the operand cannot take (psum_scatter and all_to_all of
  // a scalar, psum_scatter of bool) are left out.
  std::vector<CollectiveOp> ops = all_collective_ops();
  // shard_map's check_vma: psum and pmean then take no axis_index_groups, and sums over several
  // axes name axes the operand varies over all or none of (JAX rejects a mix).
  bool check_vma = false;
  bool axis_index_groups = true;  // whether to draw axis_index_groups where JAX takes them
};

// A collective call JAX accepts on `operand` (validate_collective passes). The mesh must have at
// least one axis.
rc::Gen<CollectiveCall> collective_call(const Mesh& mesh, const Operand& operand,
                                        const CollectiveCallOptions& options = {});

}  // namespace spmd::testkit
