// Reductions exact in any order (reference/exact_in_any_order.h): the test's examples at each
// dtype's limits, and the law it stands for: data it accepts give the same bits in every order
// the reference folds in, and in any order of the contributions.

#include "reference/exact_in_any_order.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "reference/array.h"
#include "reference/elementwise.h"
#include "reference/fold_reduce.h"
#include "reference/reduction_order.h"
#include "testing/generators.h"

namespace spmd {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

bool exact_sum(DType dtype, const std::vector<double>& values) {
  return exact_in_any_order(dtype, ReduceOp::sum, values);
}

bool exact_float32(ReduceOp op, const std::vector<double>& values) {
  return exact_in_any_order(DType::float32, op, values);
}

// One scalar contribution per value, converted to `dtype` (the values must be exact in it).
std::vector<Array> scalars(DType dtype, const std::vector<double>& values) {
  std::vector<Array> contributions;
  for (double value : values) contributions.push_back(convert(Array::scalar(value), dtype));
  return contributions;
}

ReductionOrder order_of(ReductionAlgorithm algorithm) { return {.algorithm = algorithm}; }

TEST(ExactInAnyOrder, IntegerValuedFloatSumsAreExact) {
  EXPECT_TRUE(exact_sum(DType::float32, {1, 2, 3, 4}));
  EXPECT_TRUE(exact_sum(DType::float32, {-5, 7, 1000000, -999999}));
  EXPECT_TRUE(exact_sum(DType::float32, {0.5, 0.25, -0.125}));  // multiples of 2^-3
}

// 1 + 1e8 rounds in float32: which pair adds first decides the result.
TEST(ExactInAnyOrder, ASumThatRoundsIsRefusedAndItsOrdersDiffer) {
  const std::vector<double> values = {1, 1e8, -1e8};
  EXPECT_FALSE(exact_sum(DType::float32, values));
  const std::vector<Array> contributions = scalars(DType::float32, values);
  const Array rank_order =
      all_reduce(contributions, ReduceOp::sum, order_of(ReductionAlgorithm::xla_cpu));
  const Array last_pair_first =
      all_reduce(contributions, ReduceOp::sum, order_of(ReductionAlgorithm::mpi_linear));
  EXPECT_EQ(rank_order.values<float>()[0], 0.0f);       // ((0 + 1) + 1e8) - 1e8
  EXPECT_EQ(last_pair_first.values<float>()[0], 1.0f);  // 1 + (1e8 - 1e8)
}

// sum |x| < 2^p * g, p = 53, 24, 11, 8.
TEST(ExactInAnyOrder, SumOfMagnitudesMustStayBelowTwoToThePrecisionTimesTheGranularity) {
  struct Limit {
    DType dtype;
    int precision_bits;
  };
  for (const Limit limit : {Limit{DType::float64, 53}, Limit{DType::float32, 24},
                            Limit{DType::float16, 11}, Limit{DType::bfloat16, 8}}) {
    SCOPED_TRACE(std::string(dtype_name(limit.dtype)));
    const double top = std::ldexp(1.0, limit.precision_bits);  // 2^p
    EXPECT_TRUE(exact_sum(limit.dtype, {top / 2, top / 2 - 1}));
    EXPECT_FALSE(exact_sum(limit.dtype, {top - 1, 1}));       // the sum 2^p is representable, but
                                                              // not every order keeps it so
    EXPECT_TRUE(exact_sum(limit.dtype, {top / 2, top / 2}));  // g = 2^(p-1): the sum is 2g
    EXPECT_FALSE(exact_sum(limit.dtype, {1, std::ldexp(1.0, -limit.precision_bits)}));
  }
}

TEST(ExactInAnyOrder, SubnormalValuesAndOverflowAreRefused) {
  EXPECT_TRUE(exact_sum(DType::float32, {std::ldexp(1.0, -126)}));
  EXPECT_FALSE(exact_sum(DType::float32, {std::ldexp(1.0, -149)}));  // flushed by XLA:CPU
  EXPECT_FALSE(exact_sum(DType::float64, {std::ldexp(1.0, -1074), 1}));
  EXPECT_TRUE(exact_sum(DType::float32, {std::ldexp(1.0, 126), std::ldexp(1.0, 126)}));
  EXPECT_FALSE(exact_sum(DType::float32, {std::ldexp(1.0, 127), std::ldexp(1.0, 127)}));
  EXPECT_FALSE(exact_sum(DType::float16, {32768, 32768}));  // 65536 overflows float16
}

TEST(ExactInAnyOrder, NonFiniteSumsAreRefused) {
  EXPECT_FALSE(exact_sum(DType::float32, {kInf, 1}));
  EXPECT_FALSE(exact_sum(DType::float32, {kNaN, 1}));
}

// +0 + -0 is +0; only a sum of -0.0 alone depends on whether the fold starts from +0.
TEST(ExactInAnyOrder, ASumOfNegativeZerosAloneIsRefused) {
  EXPECT_FALSE(exact_sum(DType::float32, {-0.0, -0.0}));
  EXPECT_FALSE(exact_sum(DType::float32, {-0.0}));
  EXPECT_TRUE(exact_sum(DType::float32, {-0.0, 0.0}));
  EXPECT_TRUE(exact_sum(DType::float32, {-0.0, 3}));
  EXPECT_TRUE(exact_sum(DType::float32, {}));
  const std::vector<Array> zeros = scalars(DType::float32, {-0.0, -0.0});
  EXPECT_FALSE(all_reduce(zeros, ReduceOp::sum, order_of(ReductionAlgorithm::xla_cpu))
                   .bitwise_equal(
                       all_reduce(zeros, ReduceOp::sum, order_of(ReductionAlgorithm::nccl_ring))));
}

TEST(ExactInAnyOrder, MaxAndMinAreExactButForNaNAndZerosOfBothSignsAtTheExtreme) {
  EXPECT_TRUE(exact_float32(ReduceOp::max, {1, 1e8, -1e8, kInf}));
  EXPECT_FALSE(exact_float32(ReduceOp::max, {1, kNaN}));
  EXPECT_FALSE(exact_float32(ReduceOp::max, {-0.0, 0.0, -1}));
  EXPECT_TRUE(exact_float32(ReduceOp::max, {-0.0, 0.0, 1}));
  EXPECT_FALSE(exact_float32(ReduceOp::min, {-0.0, 0.0, 1}));
  EXPECT_TRUE(exact_float32(ReduceOp::min, {-0.0, 0.0, -1}));
}

TEST(ExactInAnyOrder, IntegerAndBoolReductionsAlwaysAre) {
  const std::vector<Array> wrapping = {Array::scalar<std::int32_t>(2147483647),
                                       Array::scalar<std::int32_t>(1),
                                       Array::scalar<std::int32_t>(-5)};
  EXPECT_EQ(first_element_not_exact_in_any_order(wrapping, ReduceOp::sum), std::nullopt);
  const std::vector<Array> bools = {Array::scalar(true), Array::scalar(false)};
  EXPECT_EQ(first_element_not_exact_in_any_order(bools, ReduceOp::max), std::nullopt);
}

TEST(ExactInAnyOrder, FirstElementNotExactIsFoundElementByElement) {
  const std::vector<Array> contributions = {Array::from_values<float>({3}, {1, 1e8f, 1}),
                                            Array::from_values<float>({3}, {2, 1, 1e8f}),
                                            Array::from_values<float>({3}, {3, -1e8f, -1e8f})};
  EXPECT_EQ(first_element_not_exact_in_any_order(contributions, ReduceOp::sum), 1);
  EXPECT_EQ(first_element_not_exact_in_any_order(std::span(contributions).first(1), ReduceOp::sum),
            std::nullopt);
}

// ---- The law

struct FormatForTest {
  int precision_bits;
  int lowest_exponent;   // of the granularity drawn: 2^e normal
  int highest_exponent;  // (2^p - 1) * 2^e finite
};

FormatForTest format_for_test(DType dtype) {
  switch (dtype) {
    case DType::float16: return {11, -14, 5};
    case DType::bfloat16: return {8, -126, 120};
    case DType::float32: return {24, -126, 104};
    default: return {53, -1022, 971};
  }
}

// n contributions of `count` elements, each element k_r * 2^e with random signs. Within the
// bound: sum_r k_r <= 2^p - 1 and 2^e normal, data the test must accept (but an element of -0.0
// alone). Beyond it: k_r up to 2^(p+3) / n and 2^e down to 2^-p times the smallest normal (values
// rounded to the dtype, subnormals among them), data it may refuse and that fold differently in
// some orders.
std::vector<Array> drawn_contributions(DType dtype, int n, int count, bool within_bound) {
  const FormatForTest format = format_for_test(dtype);
  const int excess_bits = within_bound ? 0 : 3;
  const auto budget = (std::uint64_t{1} << (format.precision_bits + excess_bits)) - 1;
  const std::uint64_t share = budget / static_cast<std::uint64_t>(n);
  std::vector<std::vector<double>> values(static_cast<std::size_t>(n),
                                          std::vector<double>(static_cast<std::size_t>(count)));
  for (int e = 0; e < count; ++e) {
    const int lowest = format.lowest_exponent - (within_bound ? 0 : format.precision_bits);
    const int exponent = *rc::gen::inRange(lowest, format.highest_exponent - excess_bits + 1);
    for (int r = 0; r < n; ++r) {
      const auto k = *rc::gen::inRange<std::uint64_t>(0, share + 1);
      const double magnitude = std::ldexp(static_cast<double>(k), exponent);
      values[static_cast<std::size_t>(r)][static_cast<std::size_t>(e)] =
          *rc::gen::arbitrary<bool>() ? -magnitude : magnitude;
    }
  }
  std::vector<Array> contributions;
  for (const std::vector<double>& row : values) {
    contributions.push_back(convert(Array::from_values<double>({count}, row), dtype));
  }
  return contributions;
}

// Every order the reference models (random rings, small chunks), and the contributions in a
// random order folded in rank order: all give `expected`'s bits.
void expect_every_order_gives(const std::vector<Array>& contributions, ReduceOp op) {
  const int n = static_cast<int>(contributions.size());
  const Array expected = all_reduce(contributions, op, order_of(ReductionAlgorithm::xla_cpu));
  for (ReductionAlgorithm algorithm : kAllReductionAlgorithms) {
    if (algorithm == ReductionAlgorithm::gloo_bcube && !std::has_single_bit(unsigned(n)) &&
        n != 3) {
      continue;  // not modelled for this group size
    }
    ReductionOrder order = order_of(algorithm);
    order.ring = *testkit::permutation(n);
    order.nccl_chunk_bytes = 16;
    order.gloo_max_segment_bytes = 8;
    if (algorithm == ReductionAlgorithm::torus ||
        algorithm == ReductionAlgorithm::bidirectional_torus) {
      order.torus_dims = {n};
    }
    const Array got = all_reduce(contributions, op, order);
    RC_ASSERT(got.bitwise_equal(expected));
  }
  std::vector<Array> permuted;
  for (int r : *testkit::permutation(n)) permuted.push_back(contributions[std::size_t(r)]);
  RC_ASSERT(
      all_reduce(permuted, op, order_of(ReductionAlgorithm::xla_cpu)).bitwise_equal(expected));
}

RC_GTEST_PROP(ExactInAnyOrderProperty, AcceptedSumsAreEqualInEveryOrder, ()) {
  const DType dtype = *testkit::dtype_of(testkit::float_dtypes());
  const int n = *rc::gen::inRange(1, 9);
  const int count = *rc::gen::inRange(1, 6);
  const bool within_bound = *rc::gen::arbitrary<bool>();
  const std::vector<Array> contributions = drawn_contributions(dtype, n, count, within_bound);
  const auto refused = first_element_not_exact_in_any_order(contributions, ReduceOp::sum);
  if (refused) {
    RC_TAG(within_bound ? "refused within the bound (-0.0 alone)" : "refused beyond the bound");
    if (within_bound) {  // only an element of -0.0 alone may be refused
      for (const Array& c : contributions) {
        const double x = convert(c, DType::float64).values<double>()[std::size_t(*refused)];
        RC_ASSERT(x == 0 && std::signbit(x));
      }
    }
    return;
  }
  RC_TAG(within_bound ? "accepted within the bound" : "accepted beyond the bound");
  expect_every_order_gives(contributions, ReduceOp::sum);
}

// Values rich in ties (zeros of both signs, equal values, infinities).
RC_GTEST_PROP(ExactInAnyOrderProperty, AcceptedMaxAndMinAreEqualInEveryOrder, ()) {
  const DType dtype = *testkit::dtype_of(testkit::float_dtypes());
  const int n = *rc::gen::inRange(1, 9);
  const int count = *rc::gen::inRange(1, 6);
  const ReduceOp op = *rc::gen::element(ReduceOp::max, ReduceOp::min);
  std::vector<Array> contributions;
  for (int r = 0; r < n; ++r) {
    const auto values = *rc::gen::container<std::vector<double>>(
        static_cast<std::size_t>(count),
        rc::gen::element(-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, kInf, -kInf));
    contributions.push_back(convert(Array::from_values<double>({count}, values), dtype));
  }
  if (first_element_not_exact_in_any_order(contributions, op)) {
    RC_TAG("refused: zeros of both signs at the extreme");
    return;
  }
  expect_every_order_gives(contributions, op);
}

}  // namespace
}  // namespace spmd
