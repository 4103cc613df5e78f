#pragma once
// Order-sensitive conformance cases (docs/conformance-format.md, "Order cases"): a psum over one
// pmap axis whose inputs are searched so that the reference's result in the case's order differs
// from every plausible wrong order's (conformance/order_variants.h) in at least one element.

#include <cstdint>
#include <string>
#include <vector>

#include "conformance/order_variants.h"
#include "reference/array.h"
#include "reference/reduction_order.h"

namespace spmd::conformance {

// Where the element count lies against the order's pipeline unit (one loop of NCCL chunks, one
// round of Gloo segments, ...): below, at or above it.
enum class SizeClass { below, at, above };

struct OrderCaseShape {
  int group_size = 2;
  DType dtype = DType::float32;
  SizeClass size = SizeClass::at;
};

struct OrderCase {
  std::string name;  // "nccl_ring_n4_float32_at_64"
  ReductionOrder order;
  OrderCaseShape shape;
  std::int64_t count = 0;            // elements per device
  std::vector<Array> contributions;  // one per device, [count]
  Array expected;                    // the psum in `order`, [count]
  WrongOrders wrong;                 // each differs from `expected` in some element
};

// The public set's order for `algorithm` over `group_size` devices: small NCCL chunks and Gloo
// segments so that chunking shows at small sizes, a ring that is not the identity, torus dims
// that cover the group.
ReductionOrder public_order(ReductionAlgorithm algorithm, int group_size);

// The public set's shapes for `algorithm`: group sizes the order models (3, 5, 6 as well as 2, 4,
// 8 where it can), each dtype and size class.
std::vector<OrderCaseShape> public_shapes(ReductionAlgorithm algorithm);

// Elements in one pipeline unit of `order` over `group_size` ranks of `dtype`.
std::int64_t pipeline_unit_elements(const ReductionOrder& order, int group_size, DType dtype);
// The element count of a case of `size` against a pipeline unit (below: about three quarters of
// it, or one less when it is small; above: one and a half, off any alignment).
std::int64_t order_case_count(SizeClass size, std::int64_t unit_elements);

// Searches seeds derived from `seed` (a bounded number of tries) for data that separate `order`
// from each of its wrong orders; spmd::Error naming the case when none does, and for an
// unspecified order (in_switch), which no data separate.
OrderCase make_order_case(const ReductionOrder& order, const OrderCaseShape& shape,
                          std::uint64_t seed);

std::string_view size_class_name(SizeClass size);  // "below", "at", "above"

}  // namespace spmd::conformance
