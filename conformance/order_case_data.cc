#include "conformance/order_case_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "reference/elementwise.h"
#include "reference/error.h"
#include "reference/fold_reduce.h"
#include "support/split_mix64.h"

namespace spmd::conformance {
namespace {

// Elements redrawn per case before giving up; every public case needs far fewer.
constexpr int kMaxRedraws = 2000;
// One element in this many is -0.0 on every device (random_kind).
constexpr std::uint64_t kNegativeZeroIn = 32;
// Small chunks and segments, so that chunking shows in cases of a few hundred elements.
constexpr std::int64_t kPublicChunkBytes = 64;
// The size unit of orders with one fold for every element.
constexpr std::int64_t kSingleFoldUnit = 32;

bool is_power_of_two(int n) { return std::has_single_bit(static_cast<unsigned>(n)); }

// Even ranks, then odd ones: 0, 2, 4, 1, 3, 5 (a ring that is not the identity for n >= 3).
std::vector<int> interleaved_ring(int group_size) {
  std::vector<int> ring;
  for (int start : {0, 1}) {
    for (int r = start; r < group_size; r += 2) ring.push_back(r);
  }
  return ring;
}

std::vector<int> torus_dims_for(int group_size) {
  switch (group_size) {
    case 4: return {2, 2};
    case 6: return {2, 3};
    case 8: return {2, 4};
    default: return {group_size};
  }
}

std::uint64_t name_hash(std::string_view name) {  // FNV-1a
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return hash;
}

struct ValueRange {
  int significand_bits;  // with the implicit bit
  int low_exponent;      // values are m * 2^(k - p), k in [low, high]
  int high_exponent;
  int low_power_of_two;  // or +-2^e, e in [low, 12]
  // Or +-2^(E - d) for d in these distances below a per-element E in [0, 12]: the half ulps of
  // the element type and of float32, so that sums fall on ties that round differently in
  // different orders (also through XLA:CPU's float32 bfloat16 sum, rounded once at the end).
  std::vector<int> tie_distances;
};

ValueRange value_range(DType dtype) {
  switch (dtype) {
    case DType::float16:
      return {11, -2, 12, -13, {0, 11, 12}};  // above 2^-14, float16's least normal
    case DType::bfloat16: return {8, -12, 12, -14, {0, 8, 9, 24, 25}};
    default: return {24, -12, 12, -14, {0, 24, 25}};
  }
}

enum class ElementKind { spread, power_of_two, ties, negative_zero };

ElementKind random_kind(SplitMix64& rng) {
  // One element in kNegativeZeroIn is -0.0 on every device: only a fold that starts from the
  // identity (+0.0, XLA:CPU's) gives +0.0 there.
  if (rng.next() % kNegativeZeroIn == 0) return ElementKind::negative_zero;
  return static_cast<ElementKind>(rng.next() % 3);
}

// A full significand at a spread exponent, a power of two at a spread exponent, or a tie level
// below `tie_exponent`, each with a random sign (cancellation).
float random_value(SplitMix64& rng, const ValueRange& range, ElementKind kind, int tie_exponent) {
  const double sign = rng.next() % 2 == 0 ? 1.0 : -1.0;
  switch (kind) {
    case ElementKind::negative_zero: return -0.0f;
    case ElementKind::power_of_two: {
      const int e = static_cast<int>(rng.in_range(range.low_power_of_two, 12));
      return static_cast<float>(sign * std::ldexp(1.0, e));
    }
    case ElementKind::ties: {
      const auto& distances = range.tie_distances;
      const int d = distances[rng.next() % distances.size()];
      return static_cast<float>(sign * std::ldexp(1.0, tie_exponent - d));
    }
    case ElementKind::spread: break;
  }
  const auto m = rng.in_range(1, (std::int64_t{1} << range.significand_bits) - 1);
  const int k = static_cast<int>(rng.in_range(range.low_exponent, range.high_exponent));
  return static_cast<float>(sign * std::ldexp(static_cast<double>(m), k - range.significand_bits));
}

using Values2D = std::vector<std::vector<float>>;  // [device][element]

// Draws element `e` on every device.
void draw_element(Values2D& values, std::size_t e, SplitMix64& rng, const ValueRange& range,
                  bool negative_zero) {
  const ElementKind kind = negative_zero ? ElementKind::negative_zero : random_kind(rng);
  const int tie_exponent = static_cast<int>(rng.in_range(0, 12));
  for (std::vector<float>& device : values)
    device[e] = random_value(rng, range, kind, tie_exponent);
}

std::vector<Array> as_arrays(const Values2D& values, DType dtype) {
  std::vector<Array> contributions;
  for (const std::vector<float>& device : values) {
    const auto count = static_cast<std::int64_t>(device.size());
    contributions.push_back(convert(Array::from_values({count}, device), dtype));  // exact
  }
  return contributions;
}

// The first wrong order that gives the expected bits, or nullptr.
const WrongOrder* unseparated(const std::vector<Array>& contributions, const Array& expected,
                              const OrderCase& c) {
  for (const WrongOrder& wrong : c.wrong.orders) {
    if (reduce_with_plan(contributions, ReduceOp::sum, wrong.plan, c.order)
            .bitwise_equal(expected)) {
      return &wrong;
    }
  }
  return nullptr;
}

// An element where `wrong` folds otherwise than the case's order, drawn uniformly.
std::size_t element_to_redraw(const OrderCase& c, const WrongOrder& wrong, SplitMix64& rng) {
  const auto correct = c.order.all_reduce_plan(c.shape.group_size, c.count, c.shape.dtype);
  const auto ranges = ranges_folded_differently(correct, wrong.plan);
  std::int64_t total = 0;
  for (const auto& [begin, end] : ranges) total += end - begin;
  std::int64_t pick = rng.in_range(0, std::max<std::int64_t>(total, 1) - 1);
  for (const auto& [begin, end] : ranges) {
    if (pick < end - begin) return static_cast<std::size_t>(begin + pick);
    pick -= end - begin;
  }
  return static_cast<std::size_t>(rng.in_range(0, c.count - 1));
}

}  // namespace

std::string_view size_class_name(SizeClass size) {
  switch (size) {
    case SizeClass::below: return "below";
    case SizeClass::at: return "at";
    case SizeClass::above: return "above";
  }
  return "unknown";
}

ReductionOrder public_order(ReductionAlgorithm algorithm, int group_size) {
  using enum ReductionAlgorithm;
  ReductionOrder order{.algorithm = algorithm};
  switch (algorithm) {
    case halving_doubling:
      if (is_power_of_two(group_size)) break;  // ring and chunks unused
      [[fallthrough]];
    case nccl_ring:
    case bidirectional_ring:
      order.ring = interleaved_ring(group_size);
      order.nccl_chunk_bytes = kPublicChunkBytes;
      break;
    case nccl_tree_chain:
    case binary_tree:
    case double_binary_tree: order.ring = interleaved_ring(group_size); break;
    case torus:
    case bidirectional_torus: order.torus_dims = torus_dims_for(group_size); break;
    case gloo_ring: order.gloo_max_segment_bytes = kPublicChunkBytes; break;
    default: break;
  }
  return order;
}

std::vector<OrderCaseShape> public_shapes(ReductionAlgorithm algorithm) {
  using enum ReductionAlgorithm;
  std::vector<int> groups = {3, 4, 5, 6, 8, 2};
  if (algorithm == gloo_bcube) groups = {3, 4, 8, 2, 3, 4};  // modelled: powers of two and 3
  if (algorithm == halving_doubling) groups = {4, 8, 6, 2, 4, 8};
  if (algorithm == gloo_ring_chunked) groups = {3, 4, 5, 2, 3, 2};  // 256-element chunks
  constexpr DType kDtypes[] = {DType::float32, DType::bfloat16, DType::float16};
  constexpr SizeClass kSizes[] = {SizeClass::below, SizeClass::at, SizeClass::above};
  std::vector<OrderCaseShape> shapes;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    shapes.push_back({groups[i], kDtypes[i % 3], kSizes[(i + i / 3) % 3]});
  }
  return shapes;
}

std::int64_t pipeline_unit_elements(const ReductionOrder& order, int group_size, DType dtype) {
  using enum ReductionAlgorithm;
  const auto element_bytes = static_cast<std::int64_t>(dtype_size_bytes(dtype));
  const std::int64_t nccl_loop =
      group_size * std::max<std::int64_t>(1, order.nccl_chunk_bytes / element_bytes);
  switch (order.algorithm) {
    case nccl_ring: return nccl_loop;
    case bidirectional_ring: return 2 * nccl_loop;  // each half runs its own loops
    case halving_doubling: return is_power_of_two(group_size) ? kSingleFoldUnit : nccl_loop;
    case torus:
    case bidirectional_torus:
      return chunk_alignment_elements(order, group_size, dtype) == 1 ? kSingleFoldUnit : nccl_loop;
    case gloo_ring:  // 2n segments of the largest size
      return 2 * group_size *
             std::max<std::int64_t>(1, order.gloo_max_segment_bytes / element_bytes);
    case gloo_ring_chunked: return 2 * group_size * 256;  // 2n chunks of at least 256
    case mpi_ring: return group_size;                     // fewer elements: recursive doubling
    case mpi_rabenseifner:                                // fewer: basic linear
      return static_cast<std::int64_t>(std::bit_floor(static_cast<unsigned>(group_size)));
    default: return kSingleFoldUnit;
  }
}

std::int64_t order_case_count(SizeClass size, std::int64_t unit_elements) {
  switch (size) {
    case SizeClass::below:
      if (unit_elements < 16) return std::max<std::int64_t>(1, unit_elements - 1);
      return unit_elements * 3 / 4 - 3;
    case SizeClass::at: return unit_elements;
    case SizeClass::above: return unit_elements + unit_elements / 2 + 5;
  }
  return unit_elements;
}

OrderCase make_order_case(const ReductionOrder& order, const OrderCaseShape& shape,
                          std::uint64_t seed) {
  if (order_is_unspecified(order.algorithm)) {
    throw Error(fmt::format(
        "order {} is unspecified: no data tell it apart from another order, expected an order "
        "with a defined fold",
        reduction_algorithm_name(order.algorithm)));
  }
  OrderCase c{.order = order, .shape = shape};
  c.count =
      order_case_count(shape.size, pipeline_unit_elements(order, shape.group_size, shape.dtype));
  c.name =
      fmt::format("{}_n{}_{}_{}_{}", reduction_algorithm_name(order.algorithm), shape.group_size,
                  dtype_name(shape.dtype), size_class_name(shape.size), c.count);
  c.wrong = wrong_orders(order, shape.group_size, c.count, shape.dtype);
  // Draw every element, then redraw, one at a time, an element where a wrong order that still
  // gives the expected bits folds otherwise, until none does.
  SplitMix64 rng(seed ^ name_hash(c.name));
  const ValueRange range = value_range(shape.dtype);
  Values2D values(static_cast<std::size_t>(shape.group_size),
                  std::vector<float>(static_cast<std::size_t>(c.count)));
  for (std::size_t e = 0; e < static_cast<std::size_t>(c.count); ++e) {
    // Element 0 is -0.0 everywhere when there are others: it tells apart folds that differ
    // only in starting from the identity.
    draw_element(values, e, rng, range, e == 0 && c.count > 1);
  }
  for (int redraw = 0; redraw < kMaxRedraws; ++redraw) {
    std::vector<Array> contributions = as_arrays(values, shape.dtype);
    Array expected = all_reduce(contributions, ReduceOp::sum, order);
    const WrongOrder* wrong = unseparated(contributions, expected, c);
    if (wrong == nullptr) {
      c.contributions = std::move(contributions);
      c.expected = std::move(expected);
      return c;
    }
    draw_element(values, element_to_redraw(c, *wrong, rng), rng, range, false);
  }
  throw Error(fmt::format(
      "case {}: no data in {} redraws gives every wrong order of {} other bits, expected one "
      "(try another --seed or a larger size)",
      c.name, kMaxRedraws, order.describe()));
}

}  // namespace spmd::conformance
