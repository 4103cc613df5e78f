// spmd::Array structure (slice, take, concatenate, stack, reshape, expand_dims, squeeze) and
// element-wise arithmetic and conversion. Expected numbers follow NumPy (printed from NumPy 2.4
// where quoted) and XLA's convert semantics where NumPy leaves a case undefined.

#include "reference/array.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "reference/elementwise.h"
#include "reference/error.h"

namespace spmd {
namespace {

#define EXPECT_ERROR_CONTAINS(statement, needle)                                   \
  do {                                                                             \
    try {                                                                          \
      statement;                                                                   \
      ADD_FAILURE() << "expected spmd::Error from " #statement;                    \
    } catch (const Error& error) {                                                 \
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos)         \
          << "message: " << error.what() << "\nexpected to contain: " << (needle); \
    }                                                                              \
  } while (0)

template <class T>
std::vector<T> values_of(const Array& array) {
  auto span = array.values<T>();
  return std::vector<T>(span.begin(), span.end());
}

// int32 0, 1, ..., n-1 in the given shape, like np.arange(n).reshape(shape).
Array arange(Shape shape) {
  std::vector<std::int32_t> values(static_cast<std::size_t>(element_count(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(i);
  return Array::from_values<std::int32_t>(std::move(shape), values);
}

std::vector<std::uint16_t> half_bits(const Array& array) {
  std::vector<std::uint16_t> bits;
  if (array.dtype() == DType::float16) {
    for (Float16 h : array.values<Float16>()) bits.push_back(h.bits);
  } else {
    for (BFloat16 h : array.values<BFloat16>()) bits.push_back(h.bits);
  }
  return bits;
}

Array float16s(Shape shape, const std::vector<float>& values) {
  std::vector<Float16> halves;
  for (float v : values) halves.push_back(Float16::from_float(v));
  return Array::from_values<Float16>(std::move(shape), halves);
}

// ---- Basics -----------------------------------------------------------------------------------

TEST(Array, DefaultIsFloat32ScalarZero) {
  const Array array;
  EXPECT_EQ(array.dtype(), DType::float32);
  EXPECT_EQ(array.rank(), 0);
  EXPECT_EQ(array.size(), 1);
  EXPECT_EQ(array.values<float>()[0], 0.0f);
}

TEST(Array, ShapeStringsAsNumPyPrintsThem) {
  EXPECT_EQ(shape_to_string({}), "()");
  EXPECT_EQ(shape_to_string({5}), "(5,)");
  EXPECT_EQ(shape_to_string({4, 3}), "(4, 3)");
  EXPECT_EQ(arange({4, 3}).type_string(), "int32[4,3]");
}

TEST(Array, CopiesShareUntilWritten) {
  const Array original = arange({3});
  Array copy = original;
  EXPECT_EQ(copy.bytes().data(), original.bytes().data());
  copy.mutable_values<std::int32_t>()[0] = 7;
  EXPECT_EQ(values_of<std::int32_t>(original), (std::vector<std::int32_t>{0, 1, 2}));
  EXPECT_EQ(values_of<std::int32_t>(copy), (std::vector<std::int32_t>{7, 1, 2}));
}

TEST(Array, ConstructionErrors) {
  EXPECT_ERROR_CONTAINS(Array(DType::float32, {2, -1}), "negative dimension in shape (2, -1)");
  EXPECT_ERROR_CONTAINS(Array::from_values<float>({2}, {1.0f}), "1 values for shape (2,)");
  EXPECT_ERROR_CONTAINS(Array::from_bytes(DType::int32, {2}, std::vector<std::byte>(4)),
                        "4 bytes for int32(2,), expected 8");
  EXPECT_ERROR_CONTAINS(Array::from_bytes(DType::int32, {-2, -1}, std::vector<std::byte>(8)),
                        "negative dimension");
  EXPECT_ERROR_CONTAINS(arange({3}).values<float>(), "element access as float32");
}

// ---- Structural operations --------------------------------------------------------------------

TEST(ArrayStructure, Slice) {
  const Array array = arange({2, 3});  // [[0, 1, 2], [3, 4, 5]]
  const Array columns = slice(array, 1, 1, 3);
  EXPECT_EQ(columns.shape(), (Shape{2, 2}));
  EXPECT_EQ(values_of<std::int32_t>(columns), (std::vector<std::int32_t>{1, 2, 4, 5}));
  EXPECT_TRUE(slice(array, -1, 1, 3).bitwise_equal(columns));
  EXPECT_EQ(values_of<std::int32_t>(slice(array, 0, 1, 2)), (std::vector<std::int32_t>{3, 4, 5}));
  EXPECT_TRUE(slice(array, 0, 0, 2).bitwise_equal(array));
  EXPECT_EQ(slice(array, 1, 2, 2).shape(), (Shape{2, 0}));
}

TEST(ArrayStructure, SliceErrors) {
  const Array array = arange({2, 3});
  EXPECT_ERROR_CONTAINS(slice(array, 1, 2, 1), "range [2, 1) does not fit axis 1 of size 3");
  EXPECT_ERROR_CONTAINS(slice(array, 1, 0, 4), "range [0, 4) does not fit axis 1 of size 3");
  EXPECT_ERROR_CONTAINS(slice(array, 0, -1, 1), "range [-1, 1)");
  EXPECT_ERROR_CONTAINS(slice(array, 2, 0, 1),
                        "slice axis = 2 is out of bounds for rank 2 (expected -2 <= axis < 2)");
  EXPECT_ERROR_CONTAINS(slice(array, -3, 0, 1), "slice axis = -3 is out of bounds");
  EXPECT_ERROR_CONTAINS(slice(Array::scalar(1.0f), 0, 0, 1), "out of bounds for rank 0");
}

TEST(ArrayStructure, Take) {
  const Array array = arange({2, 3});
  const Array row = take(array, 0, 1);
  EXPECT_EQ(row.shape(), (Shape{3}));
  EXPECT_EQ(values_of<std::int32_t>(row), (std::vector<std::int32_t>{3, 4, 5}));
  const Array column = take(array, -1, 2);
  EXPECT_EQ(values_of<std::int32_t>(column), (std::vector<std::int32_t>{2, 5}));
  EXPECT_EQ(take(arange({3}), 0, 1).rank(), 0);
  EXPECT_ERROR_CONTAINS(take(array, 0, 2), "range [2, 3) does not fit axis 0 of size 2");
  EXPECT_ERROR_CONTAINS(take(array, 2, 0), "take axis = 2 is out of bounds");
}

TEST(ArrayStructure, Concatenate) {
  const Array a = arange({2, 2});                                      // [[0,1],[2,3]]
  const Array b = Array::from_values<std::int32_t>({2, 1}, {10, 11});  // [[10],[11]]
  const Array along_columns = concatenate(std::vector<Array>{a, b}, 1);
  EXPECT_EQ(along_columns.shape(), (Shape{2, 3}));
  EXPECT_EQ(values_of<std::int32_t>(along_columns),
            (std::vector<std::int32_t>{0, 1, 10, 2, 3, 11}));
  const Array along_rows = concatenate(std::vector<Array>{a, arange({1, 2}), a}, 0);
  EXPECT_EQ(along_rows.shape(), (Shape{5, 2}));
  EXPECT_EQ(values_of<std::int32_t>(along_rows),
            (std::vector<std::int32_t>{0, 1, 2, 3, 0, 1, 0, 1, 2, 3}));
  EXPECT_TRUE(concatenate(std::vector<Array>{a, b}, -1).bitwise_equal(along_columns));
  EXPECT_EQ(concatenate(std::vector<Array>{a, Array(DType::int32, {0, 2})}, 0).shape(),
            (Shape{2, 2}));
}

TEST(ArrayStructure, ConcatenateErrors) {
  const Array a = arange({2, 2});
  EXPECT_ERROR_CONTAINS(concatenate(std::vector<Array>{}, 0), "no arrays given");
  EXPECT_ERROR_CONTAINS(concatenate(std::vector<Array>{a, arange({3, 3})}, 0),
                        "int32[3,3] does not match int32[2,2] outside axis 0");
  EXPECT_ERROR_CONTAINS(concatenate(std::vector<Array>{a, Array(DType::float32, {2, 2})}, 0),
                        "float32[2,2] does not match int32[2,2]");
  // Ranks differ: an error naming both, not an out-of-range access.
  EXPECT_ERROR_CONTAINS(concatenate(std::vector<Array>{a, arange({2})}, 1),
                        "int32[2] does not match int32[2,2]");
  EXPECT_ERROR_CONTAINS(concatenate(std::vector<Array>{a, arange({2, 2, 1})}, 0),
                        "int32[2,2,1] does not match int32[2,2]");
  EXPECT_ERROR_CONTAINS(concatenate(std::vector<Array>{Array::scalar(1), Array::scalar(2)}, 0),
                        "out of bounds for rank 0");
}

TEST(ArrayStructure, Stack) {
  const Array a = arange({3});
  const Array b = Array::from_values<std::int32_t>({3}, {10, 11, 12});
  const Array rows = stack(std::vector<Array>{a, b}, 0);  // np.stack([a, b], 0)
  EXPECT_EQ(rows.shape(), (Shape{2, 3}));
  EXPECT_EQ(values_of<std::int32_t>(rows), (std::vector<std::int32_t>{0, 1, 2, 10, 11, 12}));
  const Array columns = stack(std::vector<Array>{a, b}, -1);  // np.stack([a, b], -1)
  EXPECT_EQ(columns.shape(), (Shape{3, 2}));
  EXPECT_EQ(values_of<std::int32_t>(columns), (std::vector<std::int32_t>{0, 10, 1, 11, 2, 12}));
  const Array scalars = stack(std::vector<Array>{Array::scalar(1.5f), Array::scalar(2.5f)}, 0);
  EXPECT_EQ(scalars.shape(), (Shape{2}));
  EXPECT_EQ(values_of<float>(scalars), (std::vector<float>{1.5f, 2.5f}));
  EXPECT_ERROR_CONTAINS(stack(std::vector<Array>{}, 0), "no arrays given");
  EXPECT_ERROR_CONTAINS(stack(std::vector<Array>{a, arange({4})}, 0), "does not match");
  EXPECT_ERROR_CONTAINS(stack(std::vector<Array>{a, b}, 2), "stack axis = 2 is out of bounds");
}

TEST(ArrayStructure, Reshape) {
  const Array array = arange({2, 3});
  const Array reshaped = reshape(array, {3, 2});
  EXPECT_EQ(reshaped.shape(), (Shape{3, 2}));
  EXPECT_EQ(values_of<std::int32_t>(reshaped), values_of<std::int32_t>(array));
  EXPECT_EQ(reshape(array, {6}).shape(), (Shape{6}));
  EXPECT_EQ(reshape(arange({1, 1}), {}).rank(), 0);
  EXPECT_EQ(reshape(Array(DType::int8, {0, 4}), {2, 0, 3}).shape(), (Shape{2, 0, 3}));
  EXPECT_ERROR_CONTAINS(reshape(array, {4, 2}),
                        "cannot reshape int32[2,3] to shape (4, 2) (element counts differ)");
  // Negative sizes whose product happens to match are still not a shape.
  EXPECT_ERROR_CONTAINS(reshape(array, {-2, -3}), "negative dimension");
}

TEST(ArrayStructure, ExpandDimsAndSqueeze) {
  const Array array = arange({2, 3});
  EXPECT_EQ(expand_dims(array, 0).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(expand_dims(array, 1).shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(expand_dims(array, 2).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(expand_dims(array, -1).shape(), (Shape{2, 3, 1}));  // np.expand_dims(a, -1)
  EXPECT_EQ(expand_dims(Array::scalar(1.0), 0).shape(), (Shape{1}));
  EXPECT_ERROR_CONTAINS(expand_dims(array, 3), "expand_dims axis = 3 is out of bounds for rank 3");
  EXPECT_ERROR_CONTAINS(expand_dims(array, -4), "expand_dims axis = -4");

  const Array squeezed = squeeze(expand_dims(array, 1), 1);
  EXPECT_TRUE(squeezed.bitwise_equal(array));
  EXPECT_EQ(squeeze(arange({2, 1}), -1).shape(), (Shape{2}));
  // NumPy: "cannot select an axis to squeeze out which has size not equal to one"
  EXPECT_ERROR_CONTAINS(squeeze(array, 0),
                        "cannot select an axis to squeeze out which has size not equal to one, "
                        "got shape=(2, 3) and dimensions=(0,)");
  EXPECT_ERROR_CONTAINS(squeeze(array, 2), "squeeze axis = 2 is out of bounds");
}

TEST(ArrayStructure, VaryingAxesFollowTheData) {
  const Array a = arange({2}).with_varying_axes(0b01);
  const Array b = arange({2}).with_varying_axes(0b10);
  EXPECT_EQ(concatenate(std::vector<Array>{a, b}, 0).varying_axes(), 0b11u);
  EXPECT_EQ(slice(a, 0, 0, 1).varying_axes(), 0b01u);
  EXPECT_EQ(reshape(a, {1, 2}).varying_axes(), 0b01u);
  EXPECT_EQ(add(a, b).varying_axes(), 0b11u);
  EXPECT_EQ(zeros_like(a).varying_axes(), 0b01u);
}

RC_GTEST_PROP(ArrayStructureProperty, ConcatenateOfSlicesIsTheArray, ()) {
  const auto shape =
      *rc::gen::container<Shape>(*rc::gen::inRange(1, 4), rc::gen::inRange<std::int64_t>(0, 5));
  const Array array = arange(shape);
  const int axis = *rc::gen::inRange(0, static_cast<int>(shape.size()));
  const std::int64_t cut =
      *rc::gen::inRange<std::int64_t>(0, shape[static_cast<std::size_t>(axis)] + 1);
  const std::vector<Array> parts = {slice(array, axis, 0, cut),
                                    slice(array, axis, cut, array.dim(axis))};
  RC_ASSERT(concatenate(parts, axis).bitwise_equal(array));
}

// ---- Broadcasting and arithmetic --------------------------------------------------------------

TEST(ArrayElementwise, BroadcastShapes) {
  EXPECT_EQ(broadcast_shapes({2, 3}, {3}), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes({2, 1}, {1, 3}), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes({4, 1, 3}, {2, 1}), (Shape{4, 2, 3}));
  EXPECT_EQ(broadcast_shapes({}, {2, 3}), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes({0, 3}, {1, 3}), (Shape{0, 3}));
  EXPECT_EQ(broadcast_shapes({0}, {1}), (Shape{0}));
  // NumPy: "operands could not be broadcast together with shapes (2,3) (2,)"
  EXPECT_ERROR_CONTAINS(broadcast_shapes({2, 3}, {2}),
                        "operands could not be broadcast together with shapes (2, 3) (2,)");
  EXPECT_ERROR_CONTAINS(broadcast_shapes({2}, {0}), "could not be broadcast");
}

TEST(ArrayElementwise, AddBroadcasts) {
  // np.array([[1], [2]]) + np.array([10, 20, 30]) == [[11, 21, 31], [12, 22, 32]]
  const Array column = Array::from_values<std::int32_t>({2, 1}, {1, 2});
  const Array row = Array::from_values<std::int32_t>({3}, {10, 20, 30});
  const Array sum = add(column, row);
  EXPECT_EQ(sum.shape(), (Shape{2, 3}));
  EXPECT_EQ(values_of<std::int32_t>(sum), (std::vector<std::int32_t>{11, 21, 31, 12, 22, 32}));
  EXPECT_TRUE(add(row, column).bitwise_equal(sum));

  const Array scaled = mul(Array::scalar(2.0f), Array::from_values<float>({2, 2}, {1, 2, 3, 4}));
  EXPECT_EQ(values_of<float>(scaled), (std::vector<float>{2, 4, 6, 8}));

  // (4, 1, 3) - (2, 1): every element of the result checked against explicit indexing.
  const Array a = arange({4, 1, 3});
  const Array b = Array::from_values<std::int32_t>({2, 1}, {100, 200});
  const Array difference = sub(a, b);
  ASSERT_EQ(difference.shape(), (Shape{4, 2, 3}));
  for (std::int64_t i = 0; i < 4; ++i) {
    for (std::int64_t j = 0; j < 2; ++j) {
      for (std::int64_t k = 0; k < 3; ++k) {
        EXPECT_EQ(difference.values<std::int32_t>()[static_cast<std::size_t>((i * 2 + j) * 3 + k)],
                  static_cast<std::int32_t>(i * 3 + k) - (j == 0 ? 100 : 200));
      }
    }
  }
  EXPECT_EQ(add(Array(DType::float32, {0, 3}), Array(DType::float32, {1, 3})).shape(),
            (Shape{0, 3}));
  EXPECT_ERROR_CONTAINS(add(arange({2, 3}), arange({2})), "could not be broadcast");
}

TEST(ArrayElementwise, IntegersWrapAround) {
  // np.array([100], np.int8) + np.array([100], np.int8) == [-56]
  EXPECT_EQ(
      values_of<std::int8_t>(add(Array::scalar<std::int8_t>(100), Array::scalar<std::int8_t>(100))),
      (std::vector<std::int8_t>{-56}));
  EXPECT_EQ(
      values_of<std::int8_t>(sub(Array::scalar<std::int8_t>(-128), Array::scalar<std::int8_t>(1))),
      (std::vector<std::int8_t>{127}));
  EXPECT_EQ(values_of<std::int8_t>(neg(Array::scalar<std::int8_t>(-128))),
            (std::vector<std::int8_t>{-128}));
  EXPECT_EQ(
      values_of<std::int8_t>(mul(Array::scalar<std::int8_t>(16), Array::scalar<std::int8_t>(16))),
      (std::vector<std::int8_t>{0}));
  EXPECT_EQ(values_of<std::uint8_t>(
                add(Array::scalar<std::uint8_t>(200), Array::scalar<std::uint8_t>(100))),
            (std::vector<std::uint8_t>{44}));
  EXPECT_EQ(
      values_of<std::uint8_t>(sub(Array::scalar<std::uint8_t>(0), Array::scalar<std::uint8_t>(1))),
      (std::vector<std::uint8_t>{255}));
  EXPECT_EQ(values_of<std::uint8_t>(
                mul(Array::scalar<std::uint8_t>(200), Array::scalar<std::uint8_t>(2))),
            (std::vector<std::uint8_t>{144}));
  EXPECT_EQ(values_of<std::uint8_t>(neg(Array::scalar<std::uint8_t>(1))),
            (std::vector<std::uint8_t>{255}));
  constexpr std::int32_t kInt32Max = std::numeric_limits<std::int32_t>::max();
  constexpr std::int32_t kInt32Min = std::numeric_limits<std::int32_t>::min();
  EXPECT_EQ(values_of<std::int32_t>(add(Array::scalar(kInt32Max), Array::scalar(1))),
            (std::vector<std::int32_t>{kInt32Min}));
  EXPECT_EQ(values_of<std::int32_t>(mul(Array::scalar(65536), Array::scalar(65536))),
            (std::vector<std::int32_t>{0}));
  constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ(values_of<std::int64_t>(neg(Array::scalar(kInt64Min))),
            (std::vector<std::int64_t>{kInt64Min}));
  EXPECT_EQ(values_of<std::int64_t>(
                mul(Array::scalar<std::int64_t>(1ll << 62), Array::scalar<std::int64_t>(4))),
            (std::vector<std::int64_t>{0}));
}

TEST(ArrayElementwise, Float16RoundsEachOperation) {
  // np.float16(2048) + np.float16(1) == 2048 (a tie, to even); + np.float16(3) == 2052.
  const Array big = float16s({2}, {2048, 2048});
  EXPECT_EQ(
      half_bits(add(big, float16s({2}, {1, 3}))),
      (std::vector<std::uint16_t>{Float16::from_float(2048).bits, Float16::from_float(2052).bits}));
  // Rounded after each add, 1 + 2^-11 + 2^-11 stays 1; summed exactly it would be 1 + 2^-10.
  const Array one = float16s({}, {1.0f});
  const Array tiny = float16s({}, {0x1p-11f});
  EXPECT_EQ(half_bits(add(add(one, tiny), tiny)), (std::vector<std::uint16_t>{0x3c00}));
  // np.float16(256) * np.float16(256) == inf; 65504 - (-65504) == inf.
  EXPECT_EQ(half_bits(mul(float16s({}, {256}), float16s({}, {256}))),
            (std::vector<std::uint16_t>{0x7c00}));
  EXPECT_EQ(half_bits(sub(float16s({}, {65504}), float16s({}, {-65504}))),
            (std::vector<std::uint16_t>{0x7c00}));
  // 0.1 * 3 in float16: 0.1 -> 0x2e66 (0.0999755859375); times 3 = 0.2999267578125, which
  // rounds to 0x34cc (0.2998046875), np.float16(0.1) * np.float16(3) gives the same.
  EXPECT_EQ(half_bits(mul(float16s({}, {0.1f}), float16s({}, {3}))),
            (std::vector<std::uint16_t>{0x34cc}));
  EXPECT_EQ(half_bits(neg(float16s({2}, {0.0f, 1.0f}))),
            (std::vector<std::uint16_t>{0x8000, 0xbc00}));
}

TEST(ArrayElementwise, BFloat16RoundsEachOperation) {
  auto bf16 = [](float v) { return Array::scalar(BFloat16::from_float(v)); };
  // bfloat16 has 8 significant bits: between 256 and 512 the spacing is 2, so 256 + 1 ties to
  // 256 and 256 + 3 = 259 ties to 260 (the even significand).
  EXPECT_EQ(half_bits(add(bf16(256), bf16(1))), (std::vector<std::uint16_t>{0x4380}));
  EXPECT_EQ(half_bits(add(bf16(256), bf16(3))), (std::vector<std::uint16_t>{0x4382}));
  EXPECT_EQ(half_bits(mul(bf16(3), bf16(0.5f))), (std::vector<std::uint16_t>{0x3fc0}));  // 1.5
}

TEST(ArrayElementwise, FloatArithmeticIsIeee) {
  const Array x = Array::from_values<float>({3}, {0.1f, 1e30f, -0.0f});
  const Array y = Array::from_values<float>({3}, {0.2f, 1e30f, 0.0f});
  EXPECT_EQ(values_of<float>(add(x, y)), (std::vector<float>{0.1f + 0.2f, 2e30f, 0.0f}));
  EXPECT_TRUE(std::isinf(values_of<float>(mul(x, y))[1]));
  EXPECT_TRUE(std::signbit(values_of<float>(neg(Array::scalar(0.0f)))[0]));
  EXPECT_EQ(values_of<double>(sub(Array::scalar(0.3), Array::scalar(0.1))),
            (std::vector<double>{0.3 - 0.1}));
}

TEST(ArrayElementwise, BoolAddIsOrMulIsAnd) {
  // np.array([True, True, False]) + np.array([True, False, False]) == [True, True, False];
  // * gives [True, False, False].
  const Array a = Array::from_values<bool>({4}, {false, false, true, true});
  const Array b = Array::from_values<bool>({4}, {false, true, false, true});
  EXPECT_EQ(values_of<bool>(add(a, b)), (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(values_of<bool>(mul(a, b)), (std::vector<bool>{false, false, false, true}));
  // NumPy: "numpy boolean subtract, the `-` operator, is not supported"
  EXPECT_ERROR_CONTAINS(sub(a, b), "numpy boolean subtract, the `-` operator, is not supported");
  EXPECT_ERROR_CONTAINS(neg(a), "not supported for bool");
}

TEST(ArrayElementwise, DTypeMismatchIsAnError) {
  EXPECT_ERROR_CONTAINS(add(Array::from_values<float>({2}, {1, 2}), arange({2})),
                        "add: operand dtypes differ: float32[2] and int32[2], expected the same");
  EXPECT_ERROR_CONTAINS(sub(Array::scalar(1.0), Array::scalar(1.0f)), "sub: operand dtypes differ");
  EXPECT_ERROR_CONTAINS(mul(Array::scalar(true), Array::scalar<std::int8_t>(1)),
                        "mul: operand dtypes differ: bool[] and int8[]");
}

// ---- Conversion -------------------------------------------------------------------------------

TEST(ArrayConvert, FloatToIntTruncatesTowardZero) {
  // np.array([1.9, -1.9, -0.5], np.float32).astype(np.int32) == [1, -1, 0]
  const Array x = Array::from_values<float>({5}, {1.9f, -1.9f, 0.5f, -0.5f, -0.0f});
  EXPECT_EQ(values_of<std::int32_t>(convert(x, DType::int32)),
            (std::vector<std::int32_t>{1, -1, 0, 0, 0}));
  EXPECT_EQ(values_of<std::int8_t>(convert(float16s({2}, {-2.75f, 100.5f}), DType::int8)),
            (std::vector<std::int8_t>{-2, 100}));
}

TEST(ArrayConvert, FloatToIntNaNIsZeroAndOutOfRangeSaturates) {
  // NumPy leaves these undefined (x86 gives INT_MIN); XLA's convert gives 0 for NaN and
  // saturates, which is what the simulator follows.
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const Array x = Array::from_values<float>({5}, {NAN, 1e10f, -1e10f, kInf, -kInf});
  EXPECT_EQ(
      values_of<std::int32_t>(convert(x, DType::int32)),
      (std::vector<std::int32_t>{
          0, std::numeric_limits<std::int32_t>::max(), std::numeric_limits<std::int32_t>::min(),
          std::numeric_limits<std::int32_t>::max(), std::numeric_limits<std::int32_t>::min()}));
  EXPECT_EQ(values_of<std::int8_t>(
                convert(Array::from_values<float>({3}, {300, -300, 127.9f}), DType::int8)),
            (std::vector<std::int8_t>{127, -128, 127}));
  EXPECT_EQ(values_of<std::uint8_t>(
                convert(Array::from_values<float>({4}, {-5, 300, 255.5f, -0.9f}), DType::uint8)),
            (std::vector<std::uint8_t>{0, 255, 255, 0}));
  const Array wide = Array::from_values<double>({4}, {0x1p63, -0x1p63, 0x1p63 - 1024, NAN});
  EXPECT_EQ(values_of<std::int64_t>(convert(wide, DType::int64)),
            (std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::max(),
                                       std::numeric_limits<std::int64_t>::min(),
                                       (1ll << 62) + ((1ll << 62) - 1024), 0}));
  EXPECT_EQ(values_of<std::int8_t>(convert(float16s({1}, {65504}), DType::int8)),
            (std::vector<std::int8_t>{127}));
}

TEST(ArrayConvert, IntToIntWraps) {
  // np.array([300, -1], np.int32).astype(np.int8) == [44, -1]; .astype(np.uint8) == [44, 255]
  const Array x = Array::from_values<std::int32_t>({2}, {300, -1});
  EXPECT_EQ(values_of<std::int8_t>(convert(x, DType::int8)), (std::vector<std::int8_t>{44, -1}));
  EXPECT_EQ(values_of<std::uint8_t>(convert(x, DType::uint8)),
            (std::vector<std::uint8_t>{44, 255}));
  EXPECT_EQ(
      values_of<std::int32_t>(convert(Array::scalar<std::int64_t>((1ll << 40) + 5), DType::int32)),
      (std::vector<std::int32_t>{5}));
  EXPECT_EQ(values_of<std::int64_t>(convert(Array::scalar<std::uint8_t>(255), DType::int64)),
            (std::vector<std::int64_t>{255}));
}

TEST(ArrayConvert, Float64ToHalfRoundsOnce) {
  // 1 + 2^-11 + 2^-40 lies just above the float16 midpoint 1 + 2^-11, so it rounds up to
  // 1 + 2^-10 (0x3c01): np.float16(1 + 2**-11 + 2**-40).view(np.uint16) == 15361. Through
  // float32 it would first become exactly 1 + 2^-11, a tie, and then round down to 1.0.
  const Array x = Array::scalar(1.0 + 0x1p-11 + 0x1p-40);
  EXPECT_EQ(half_bits(convert(x, DType::float16)), (std::vector<std::uint16_t>{0x3c01}));
  EXPECT_EQ(Float16::from_float(static_cast<float>(1.0 + 0x1p-11 + 0x1p-40)).bits, 0x3c00);
  // The same in bfloat16 (8 significant bits): 1 + 2^-8 + 2^-40 rounds up to 1 + 2^-7.
  EXPECT_EQ(half_bits(convert(Array::scalar(1.0 + 0x1p-8 + 0x1p-40), DType::bfloat16)),
            (std::vector<std::uint16_t>{0x3f81}));
  // And in the subnormal range: 2^-25 + 2^-60 rounds up to 2^-24 (np.float16 gives 0x0001);
  // through float32 it would be the tie 2^-25 and round to 0.
  EXPECT_EQ(half_bits(convert(Array::scalar(0x1p-25 + 0x1p-60), DType::float16)),
            (std::vector<std::uint16_t>{0x0001}));
  // Just below a midpoint must not be pushed up either.
  EXPECT_EQ(half_bits(convert(Array::scalar(1.0 + 0x1p-11 - 0x1p-40), DType::float16)),
            (std::vector<std::uint16_t>{0x3c00}));
  EXPECT_EQ(half_bits(convert(Array::scalar(1.0 + 3 * 0x1p-11), DType::float16)),
            (std::vector<std::uint16_t>{0x3c02}));  // an exact tie goes to even
}

TEST(ArrayConvert, Float64ToHalfSpecialValues) {
  const Array x = Array::from_values<double>({6}, {65520.0, 65519.999, -1e300, NAN, -0.0, 1e-300});
  EXPECT_EQ(half_bits(convert(x, DType::float16)),
            (std::vector<std::uint16_t>{0x7c00, 0x7bff, 0xfc00, 0x7e00, 0x8000, 0x0000}));
  const std::vector<std::uint16_t> bf = half_bits(convert(x, DType::bfloat16));
  EXPECT_EQ(bf[0], BFloat16::from_float(65520.0f).bits);
  EXPECT_EQ(bf[2], 0xff80);           // -1e300 overflows to -inf
  EXPECT_EQ(bf[3] & 0x7fc0, 0x7fc0);  // quiet NaN
  EXPECT_EQ(bf[4], 0x8000);
}

TEST(ArrayConvert, FloatWidths) {
  // float64 -> float32 is IEEE round to nearest even; float16 -> float32 is exact.
  EXPECT_EQ(values_of<float>(convert(Array::scalar(0.1), DType::float32)),
            (std::vector<float>{0.1f}));
  EXPECT_EQ(values_of<float>(convert(float16s({2}, {65504, 0x1p-24f}), DType::float32)),
            (std::vector<float>{65504, 0x1p-24f}));
  EXPECT_EQ(values_of<double>(convert(float16s({1}, {0.1f}), DType::float64)),
            (std::vector<double>{0.0999755859375}));
  // float16 -> bfloat16 rounds: 65504 needs 11 significant bits and becomes 65536.
  EXPECT_EQ(half_bits(convert(float16s({1}, {65504}), DType::bfloat16)),
            (std::vector<std::uint16_t>{0x4780}));
}

TEST(ArrayConvert, IntToFloatRoundsToNearestEven) {
  // np.array([2051, 2049, 65519, 65520], np.int32).astype(np.float16) == [2052, 2048, 65504, inf]
  const Array x = Array::from_values<std::int32_t>({4}, {2051, 2049, 65519, 65520});
  EXPECT_EQ(half_bits(convert(x, DType::float16)),
            (std::vector<std::uint16_t>{Float16::from_float(2052).bits,
                                        Float16::from_float(2048).bits, 0x7bff, 0x7c00}));
  EXPECT_EQ(values_of<float>(convert(Array::scalar(16777217), DType::float32)),
            (std::vector<float>{16777216.0f}));
  EXPECT_EQ(
      values_of<double>(convert(Array::scalar<std::int64_t>((1ll << 53) + 1), DType::float64)),
      (std::vector<double>{0x1p53}));
}

TEST(ArrayConvert, BoolAndNumbers) {
  const Array flags = Array::from_values<bool>({2}, {false, true});
  EXPECT_EQ(values_of<float>(convert(flags, DType::float32)), (std::vector<float>{0, 1}));
  EXPECT_EQ(values_of<std::int8_t>(convert(flags, DType::int8)), (std::vector<std::int8_t>{0, 1}));
  EXPECT_EQ(values_of<std::int64_t>(convert(flags, DType::int64)),
            (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(half_bits(convert(flags, DType::float16)),
            (std::vector<std::uint16_t>{0x0000, 0x3c00}));
  EXPECT_EQ(half_bits(convert(flags, DType::bfloat16)),
            (std::vector<std::uint16_t>{0x0000, 0x3f80}));

  // To bool is != 0: NaN is True, -0.0 is False (np.array([nan, -0.0]).astype(bool)).
  const Array floats = Array::from_values<float>({5}, {0.0f, -0.0f, 0.5f, NAN, -INFINITY});
  EXPECT_EQ(values_of<bool>(convert(floats, DType::bool_)),
            (std::vector<bool>{false, false, true, true, true}));
  EXPECT_EQ(
      values_of<bool>(convert(Array::from_values<std::int32_t>({3}, {0, 5, -1}), DType::bool_)),
      (std::vector<bool>{false, true, true}));
  EXPECT_EQ(values_of<bool>(convert(float16s({3}, {-0.0f, 1e-7f, 2}), DType::bool_)),
            (std::vector<bool>{false, true, true}));  // 1e-7 is a float16 subnormal, not zero
  EXPECT_EQ(values_of<bool>(convert(Array::scalar<std::uint8_t>(0), DType::bool_)),
            (std::vector<bool>{false}));
}

TEST(ArrayConvert, SameDTypeKeepsTheBits) {
  const Array nan_payload = Array::from_values<float>({1}, {std::bit_cast<float>(0x7fc01234u)});
  EXPECT_TRUE(convert(nan_payload, DType::float32).bitwise_equal(nan_payload));
}

// Converting float16 to any wider float and back is the identity (NaN aside).
RC_GTEST_PROP(ArrayConvertProperty, Float16SurvivesWiderFloats, (std::uint16_t bits)) {
  RC_PRE((bits & 0x7c00) != 0x7c00 || (bits & 0x3ff) == 0);
  const Array half = Array::scalar(Float16{bits});
  for (DType wider : {DType::float32, DType::float64}) {
    RC_ASSERT(convert(convert(half, wider), DType::float16).bitwise_equal(half));
  }
}

// float64 -> float16 equals the nearest float16 to the double, which for doubles that are
// floats is Float16::from_float; for other doubles, the result is one of the two float16 values
// around the double and the nearer one.
RC_GTEST_PROP(ArrayConvertProperty, Float64ToFloat16IsNearest,
              (std::uint16_t low_bits, std::uint32_t fraction)) {
  const std::uint16_t low = low_bits % 0x7bff;  // a finite non-negative half below the maximum
  const double low_value = static_cast<double>(Float16{low}.to_float());
  const double high_value =
      static_cast<double>(Float16{static_cast<std::uint16_t>(low + 1)}.to_float());
  const double t = static_cast<double>(fraction) / 0x1p32;  // in [0, 1)
  const double x = low_value + t * (high_value - low_value);
  const std::uint16_t result = half_bits(convert(Array::scalar(x), DType::float16))[0];
  const double below = x - low_value, above = high_value - x;
  const std::uint16_t expected = below < above ? low
                                 : below > above
                                     ? static_cast<std::uint16_t>(low + 1)
                                     : static_cast<std::uint16_t>(low % 2 == 0 ? low : low + 1);
  RC_ASSERT(result == expected);
}

}  // namespace
}  // namespace spmd
