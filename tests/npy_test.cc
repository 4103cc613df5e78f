// .npy reading and writing: round trips of every dtype, byte-exact agreement with np.save, files
// written by NumPy, and one test per kind of malformed file (each error is one line naming the
// file, the field and the value).

#include "reference/npy.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "reference/array.h"
#include "reference/dtype.h"
#include "reference/error.h"

namespace spmd {
namespace {

using namespace std::string_literals;

std::vector<std::byte> to_bytes(std::string_view text) {
  std::vector<std::byte> bytes;
  for (char c : text) bytes.push_back(static_cast<std::byte>(c));
  return bytes;
}

std::vector<std::byte> to_bytes(std::initializer_list<std::uint8_t> values) {
  std::vector<std::byte> bytes;
  for (std::uint8_t v : values) bytes.push_back(std::byte{v});
  return bytes;
}

// An .npy file with the given header dict text and data, laid out as format `major`.0 (the
// header is not padded: readers must not depend on NumPy's alignment).
std::vector<std::byte> make_npy(std::string_view dict, std::vector<std::byte> data = {},
                                std::uint8_t major = 1) {
  std::vector<std::byte> bytes = to_bytes("\x93NUMPY");
  bytes.push_back(std::byte{major});
  bytes.push_back(std::byte{0});
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  for (std::size_t i = 0; i < length_bytes; ++i) {
    bytes.push_back(static_cast<std::byte>((dict.size() >> (8 * i)) & 0xff));
  }
  const std::vector<std::byte> dict_bytes = to_bytes(dict);
  bytes.insert(bytes.end(), dict_bytes.begin(), dict_bytes.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

std::string f4_dict(std::string_view shape) {
  return "{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(shape) + ", }";
}

// The message of the spmd::Error that parsing `bytes` as "x.npy" throws; fails the test if it
// throws nothing or the message is not a single line about x.npy.
std::string error_of(const std::vector<std::byte>& bytes,
                     std::optional<DType> declared = std::nullopt) {
  try {
    const Array array = parse_npy(bytes, "x.npy", declared);
    ADD_FAILURE() << "expected spmd::Error, got " << array.type_string();
    return "";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind("x.npy: ", 0), 0u) << message;
    return message;
  }
}

#define EXPECT_CONTAINS(haystack, needle)                          \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) \
      << "message: " << (haystack) << "\nexpected to contain: " << (needle)

// A temporary file path unique to this process and test; removed by the destructor.
class TempPath {
 public:
  explicit TempPath(const std::string& stem) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("npy_test_" + std::to_string(::getpid()) + "_" + info->name() + "_" + stem + ".npy");
  }
  ~TempPath() { std::filesystem::remove(path_); }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// An array of `dtype` whose bytes are a fixed pattern (bool: 0/1 alternating, as bool allows).
Array patterned(DType dtype, Shape shape) {
  Array array(dtype, std::move(shape));
  auto bytes = array.mutable_bytes();
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = dtype == DType::bool_ ? std::byte(i % 3 == 0) : std::byte((i * 37 + 11) & 0xff);
  }
  return array;
}

std::optional<DType> declared_for(DType dtype) {
  // bfloat16 can only be read back when declared; the others read back either way.
  return dtype == DType::bfloat16 ? std::optional<DType>(DType::bfloat16) : std::nullopt;
}

// ---- Round trips ------------------------------------------------------------------------------

TEST(npy, RoundTripEveryDTypeThroughBytes) {
  for (DType dtype : kAllDTypes) {
    const Array array = patterned(dtype, {4, 3});
    const Array back = parse_npy(serialize_npy(array), "mem.npy", declared_for(dtype));
    EXPECT_TRUE(back.bitwise_equal(array)) << dtype_name(dtype);
    // Declaring the dtype the file has is always accepted.
    EXPECT_TRUE(parse_npy(serialize_npy(array), "mem.npy", dtype).bitwise_equal(array));
  }
}

TEST(npy, RoundTripEveryDTypeThroughFile) {
  for (DType dtype : kAllDTypes) {
    TempPath path(std::string(dtype_name(dtype)));
    const Array array = patterned(dtype, {2, 5});
    write_npy(path.str(), array);
    EXPECT_TRUE(read_npy(path.str(), declared_for(dtype)).bitwise_equal(array))
        << dtype_name(dtype);
  }
}

TEST(npy, RoundTripBFloat16IsWrittenAsUint16AndNeedsTheDeclaration) {
  const Array array = Array::from_values<BFloat16>(
      {3}, {BFloat16::from_float(1.0f), BFloat16::from_float(-2.5f), BFloat16{0x7fc0}});
  const std::vector<std::byte> bytes = serialize_npy(array);
  const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  EXPECT_CONTAINS(text, "'descr': '<u2'");
  EXPECT_TRUE(parse_npy(bytes, "b.npy", DType::bfloat16).bitwise_equal(array));
  EXPECT_CONTAINS(error_of(bytes), "'<u2'");
}

TEST(npy, RoundTripScalarsOfEveryDType) {
  for (DType dtype : kAllDTypes) {
    const Array array = patterned(dtype, {});
    const std::vector<std::byte> bytes = serialize_npy(array);
    const Array back = parse_npy(bytes, "s.npy", declared_for(dtype));
    EXPECT_TRUE(back.bitwise_equal(array)) << dtype_name(dtype);
    EXPECT_EQ(back.rank(), 0);
  }
  const std::vector<std::byte> bytes = serialize_npy(Array::scalar(2.5));
  const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  EXPECT_CONTAINS(text, "'shape': (), }");
}

TEST(npy, RoundTripEmptyDimensions) {
  for (const Shape& shape : {Shape{0}, Shape{3, 0, 2}, Shape{0, 0}, Shape{1, 0}}) {
    for (DType dtype : kAllDTypes) {
      const Array array(dtype, shape);
      const Array back = parse_npy(serialize_npy(array), "e.npy", declared_for(dtype));
      EXPECT_TRUE(back.bitwise_equal(array)) << dtype_name(dtype) << shape_to_string(shape);
    }
  }
}

TEST(npy, RoundTripOneDimensionalShapeHasTrailingComma) {
  const std::vector<std::byte> bytes =
      serialize_npy(Array::from_values<std::int8_t>({5}, {1, 2, 3, 4, 5}));
  const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  EXPECT_CONTAINS(text, "{'descr': '|i1', 'fortran_order': False, 'shape': (5,), }");
}

RC_GTEST_PROP(npy, RoundTripRandomArraysRoundTripBitwise, ()) {
  const DType dtype =
      *rc::gen::elementOf(std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes)));
  const auto shape =
      *rc::gen::container<Shape>(*rc::gen::inRange(0, 5), rc::gen::inRange<std::int64_t>(0, 5));
  Array array(dtype, shape);
  auto bytes = array.mutable_bytes();
  const auto random_bytes = *rc::gen::container<std::vector<std::uint8_t>>(
      bytes.size(), dtype == DType::bool_ ? rc::gen::inRange<std::uint8_t>(0, 2)
                                          : rc::gen::arbitrary<std::uint8_t>());
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = std::byte{random_bytes[i]};
  const std::vector<std::byte> file = serialize_npy(array);
  RC_ASSERT(file.size() % 64 == array.size_bytes() % 64);  // data starts 64-byte aligned
  RC_ASSERT(parse_npy(file, "r.npy", declared_for(dtype)).bitwise_equal(array));
}

// Corrupting a valid file anywhere (a byte changed, or the file cut short) gives an Array or
// an spmd::Error, never a crash or another exception.
RC_GTEST_PROP(npy, MalformedCorruptedFilesGiveErrorOrArray, ()) {
  std::vector<std::byte> file = serialize_npy(patterned(DType::float32, {3, 2}));
  const auto position = *rc::gen::inRange<std::size_t>(0, file.size());
  const auto value = *rc::gen::arbitrary<std::uint8_t>();
  file[position] = std::byte{value};
  const auto kept = *rc::gen::inRange<std::size_t>(0, file.size() + 1);
  file.resize(kept);
  try {
    parse_npy(file, "c.npy", std::nullopt);
  } catch (const Error&) {
  }
}

// Header text made of the characters a dict literal uses, in random order: the parser must
// reject or accept it without crashing, and any Array it returns must have a valid shape.
RC_GTEST_PROP(npy, MalformedRandomHeadersGiveErrorOrArray, ()) {
  static const std::vector<std::string> pieces = {
      "{",     "}",      "(",       ")",       "[",
      "]",     ",",      ":",       " ",       "'",
      "\"",    "\n",     "-",       "0",       "1",
      "7",     ".",      "'descr'", "'shape'", "'fortran_order'",
      "True",  "False",  "None",    "'<f4'",   "'|b1'",
      "'>i8'", "(2, 3)", "()",      "(1,)",    "99999999999999999999",
      "x",     "\\"};
  const auto chosen = *rc::gen::container<std::vector<std::string>>(rc::gen::elementOf(pieces));
  std::string dict;
  for (const std::string& piece : chosen) dict += piece;
  const auto data_bytes = *rc::gen::inRange<std::size_t>(0, 32);
  try {
    const Array array =
        parse_npy(make_npy(dict, std::vector<std::byte>(data_bytes)), "h.npy", std::nullopt);
    RC_ASSERT(array.size_bytes() == data_bytes);
  } catch (const Error& error) {
    RC_ASSERT(std::string(error.what()).find('\n') == std::string::npos);
  }
}

// ---- Agreement with NumPy ---------------------------------------------------------------------

TEST(npy, NumPyHeaderBytesMatchNpSave) {
  // python3 -c "import numpy as np, io; b=io.BytesIO();
  //   np.save(b, np.arange(6, dtype=np.int32).reshape(2, 3)); print(b.getvalue())"
  // (NumPy 2.4) gives this 128-byte header, then the 24 data bytes: 'v' = 118 is the header
  // length, and the padding is NumPy's 20 spare spaces for the first dimension plus the
  // alignment spaces up to 64 bytes.
  const std::string expected_header =
      "\x93NUMPY\x01\x00v\x00{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }"
      "                                                          \n"s;
  ASSERT_EQ(expected_header.size(), 128u);
  std::vector<std::byte> expected = to_bytes(expected_header);
  for (std::int32_t v = 0; v < 6; ++v) {
    for (int b = 0; b < 4; ++b) expected.push_back(static_cast<std::byte>((v >> (8 * b)) & 0xff));
  }
  const Array array = Array::from_values<std::int32_t>({2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(serialize_npy(array), expected);
}

TEST(npy, NumPyScalarAndVectorHeadersMatchNpSave) {
  // From np.lib.format.write_array_header_1_0 for '<f4' with shapes () and (5,): 128 bytes,
  // no spare growth spaces for a scalar, 20 of them for (5,).
  const std::string scalar_header =
      "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (), }"s +
      std::string(62, ' ') + "\n";
  const std::string vector_header =
      "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }"s +
      std::string(60, ' ') + "\n";
  const std::vector<std::byte> scalar = serialize_npy(Array::scalar(1.0f));
  const std::vector<std::byte> vector = serialize_npy(Array(DType::float32, {5}));
  EXPECT_EQ(std::vector<std::byte>(scalar.begin(), scalar.begin() + 128), to_bytes(scalar_header));
  EXPECT_EQ(std::vector<std::byte>(vector.begin(), vector.begin() + 128), to_bytes(vector_header));
}

TEST(npy, NumPyReadsFloat16FileWrittenByNumPy) {
  // np.save of np.array([[0.5, -2.0, 3.25], [1e-3, 65504, -0.0]], dtype=np.float16), NumPy 2.4.
  const std::vector<std::byte> file = to_bytes({
      0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65,
      0x73, 0x63, 0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x66, 0x32, 0x27, 0x2c, 0x20, 0x27,
      0x66, 0x6f, 0x72, 0x74, 0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27,
      0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73, 0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70,
      0x65, 0x27, 0x3a, 0x20, 0x28, 0x32, 0x2c, 0x20, 0x33, 0x29, 0x2c, 0x20, 0x7d, 0x20,
      0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
      0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
      0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
      0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
      0x20, 0x0a, 0x00, 0x38, 0x00, 0xc0, 0x80, 0x42, 0x19, 0x14, 0xff, 0x7b, 0x00, 0x80,
  });
  const Array array = parse_npy(file, "numpy_f16.npy", std::nullopt);
  ASSERT_EQ(array.dtype(), DType::float16);
  ASSERT_EQ(array.shape(), (Shape{2, 3}));
  // a.view(np.uint16) in NumPy: [[14336, 49152, 17024], [5145, 31743, 32768]]
  const std::vector<std::uint16_t> expected_bits = {0x3800, 0xc000, 0x4280, 0x1419, 0x7bff, 0x8000};
  for (std::size_t i = 0; i < expected_bits.size(); ++i) {
    EXPECT_EQ(array.values<Float16>()[i].bits, expected_bits[i]) << i;
  }
  EXPECT_EQ(serialize_npy(array), file);  // and we write it back byte for byte
}

TEST(npy, NumPyReadsBoolFileWrittenByNumPy) {
  // np.save of np.array([True, False, True]): descr '|b1', shape (3,).
  std::vector<std::byte> file =
      to_bytes("\x93NUMPY\x01\x00v\x00{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }"s +
               std::string(60, ' ') + "\n");
  const std::vector<std::byte> data = to_bytes({0x01, 0x00, 0x01});
  file.insert(file.end(), data.begin(), data.end());
  const Array array = parse_npy(file, "numpy_bool.npy", std::nullopt);
  ASSERT_EQ(array.dtype(), DType::bool_);
  EXPECT_EQ(array.values_string(), "[True, False, True]");
  EXPECT_EQ(serialize_npy(array), file);
}

TEST(npy, NumPyAcceptsVersions2And3AndUnpaddedHeaders) {
  const std::vector<std::byte> data = to_bytes({0x00, 0x00, 0x80, 0x3f});  // 1.0f
  for (std::uint8_t major : {1, 2, 3}) {
    const Array array = parse_npy(make_npy(f4_dict("(1,)"), data, major), "v.npy", std::nullopt);
    EXPECT_EQ(array.values<float>()[0], 1.0f) << int{major};
  }
  // Python literal spellings NumPy's reader (ast.literal_eval) also accepts.
  const Array spaced =
      parse_npy(make_npy("  {\"shape\":(1 ,),'fortran_order':False,\"descr\":'<f4'}\n", data),
                "v.npy", std::nullopt);
  EXPECT_EQ(spaced.shape(), (Shape{1}));
}

TEST(npy, NumPyReadsEveryConformanceCaseFile) {
  int files_read = 0;
  for (const auto& entry : std::filesystem::directory_iterator(SPMD_CONFORMANCE_DIR)) {
    if (entry.path().extension() != ".npy") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string header((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
    // A case stores bfloat16 as '<u2' and says so in its JSON; the header tells us here.
    const bool is_bfloat16 = header.find("'descr': '<u2'") != std::string::npos;
    const std::optional<DType> declared =
        is_bfloat16 ? std::optional<DType>(DType::bfloat16) : std::nullopt;
    try {
      const Array array = read_npy(entry.path().string(), declared);
      EXPECT_TRUE(parse_npy(serialize_npy(array), "again.npy", declared).bitwise_equal(array));
    } catch (const Error& error) {
      ADD_FAILURE() << error.what();
    }
    ++files_read;
  }
  EXPECT_GT(files_read, 0);
}

// ---- Malformed input --------------------------------------------------------------------------

TEST(npy, MalformedMissingFile) {
  const std::string path = "/nonexistent_npy_test_dir/x.npy";
  try {
    read_npy(path);
    FAIL() << "expected spmd::Error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), path + ": cannot read the .npy file (no such file)");
  }
}

TEST(npy, MalformedDirectoryIsNotAFile) {
  try {
    read_npy(std::filesystem::temp_directory_path().string());
    FAIL() << "expected spmd::Error";
  } catch (const Error& error) {
    EXPECT_CONTAINS(error.what(), "cannot read the .npy file (a folder, expected a file)");
  }
}

TEST(npy, SpecialFilesAndShapesOfTooManyDimensionsAreRefused) {
  try {
    read_npy("/dev/zero");
    FAIL() << "expected spmd::Error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()),
              "/dev/zero: cannot read the .npy file (a device or special file, expected a "
              "regular file)");
  }
  std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 10000; ++i) header += "1, ";
  header += "), }\n";
  std::string file = std::string("\x93NUMPY\x02\x00", 8);
  const auto length = static_cast<std::uint32_t>(header.size());
  for (int i = 0; i < 4; ++i) file += static_cast<char>((length >> (8 * i)) & 0xff);
  file += header;
  const std::string message = error_of(to_bytes(file));
  EXPECT_CONTAINS(message, "a shape of 10000 dimensions, expected at most 64");
  EXPECT_LT(message.size(), 300u);
}

TEST(npy, MalformedEmptyAndShortFiles) {
  EXPECT_CONTAINS(error_of({}), "file is 0 bytes, expected at least 6 for the magic string");
  EXPECT_CONTAINS(error_of(to_bytes("\x93NUMPY\x01")), "file is 7 bytes");
  EXPECT_CONTAINS(error_of(to_bytes(std::string_view("\x93NUMPY\x01\x00\x10", 9))),
                  "expected at least 10 for the header length");
  EXPECT_CONTAINS(error_of(to_bytes(std::string_view("\x93NUMPY\x02\x00\x10\x00\x00", 11))),
                  "expected at least 12 for the header length");
}

TEST(npy, MalformedHeaderLengthBeyondTheFile) {
  std::vector<std::byte> file = make_npy(f4_dict("()"));
  file.erase(file.end() - 5, file.end());  // the length field still claims the whole dict
  EXPECT_CONTAINS(error_of(file), "header length is 55 bytes, expected at most the 50 bytes");
}

TEST(npy, MalformedBadMagic) {
  const std::string message =
      error_of(to_bytes(std::string_view("PK\x03\x04\x14\x00\x00\x00\x08\x00", 10)));
  EXPECT_CONTAINS(message, "magic string is 'PK\\x03\\x04\\x14\\x00', expected '\\x93NUMPY'");
}

TEST(npy, MalformedUnsupportedVersion) {
  std::vector<std::byte> file = make_npy(f4_dict("()"), to_bytes({0, 0, 0, 0}));
  file[6] = std::byte{4};
  EXPECT_CONTAINS(error_of(file), "format version is 4.0, expected 1.0, 2.0 or 3.0");
  file[6] = std::byte{1};
  file[7] = std::byte{1};
  EXPECT_CONTAINS(error_of(file), "format version is 1.1");
}

TEST(npy, MalformedHeaderIsNotADict) {
  EXPECT_CONTAINS(error_of(make_npy("[1, 2]")), "header is [1, 2], expected a dict");
  EXPECT_CONTAINS(error_of(make_npy("(3)")), "header is (3), expected a dict");
}

TEST(npy, MalformedHeaderIsNotAPythonLiteral) {
  const std::string message = error_of(make_npy("{'descr': '<f4' 'shape': ()}"));
  EXPECT_CONTAINS(message, "header is not a Python literal: found ''' at offset 16");
  EXPECT_CONTAINS(error_of(make_npy("{'descr': numpy.float32}")), "not a Python literal");
  EXPECT_CONTAINS(error_of(make_npy("{'descr': '<f4}")), "expected a closing quote");
  EXPECT_CONTAINS(error_of(make_npy("{'descr': '<f4'} extra")), "expected the end of the header");
  EXPECT_CONTAINS(error_of(make_npy("")), "found the end at offset 0, expected a value");
}

TEST(npy, MalformedBinaryHeaderGivesOneLinePrintableMessage) {
  const std::string message = error_of(make_npy(std::string_view("{'descr':\n\x01\xff", 12)));
  EXPECT_CONTAINS(message, "\\x0a\\x01\\xff");
}

TEST(npy, MalformedDeeplyNestedHeaderIsRefusedWithoutRecursingForever) {
  EXPECT_CONTAINS(error_of(make_npy(std::string(1000, '('))), "at most 16 levels of nesting");
  EXPECT_CONTAINS(error_of(make_npy("{'shape': " + std::string(100, '[') + "}")),
                  "at most 16 levels of nesting");
}

TEST(npy, MalformedMissingKeys) {
  EXPECT_CONTAINS(error_of(make_npy("{'descr': '<f4', 'fortran_order': False}")),
                  "header has no field 'shape'");
  EXPECT_CONTAINS(error_of(make_npy("{'shape': (), 'fortran_order': False}")),
                  "header has no field 'descr'");
  EXPECT_CONTAINS(error_of(make_npy("{'shape': (), 'descr': '<f4'}")),
                  "header has no field 'fortran_order'");
  EXPECT_CONTAINS(error_of(make_npy("{}")), "header has no field 'descr'");
}

TEST(npy, MalformedUnknownAndRepeatedKeys) {
  EXPECT_CONTAINS(
      error_of(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'align': 4}")),
      "header key 'align' is not known");
  EXPECT_CONTAINS(error_of(make_npy("{'descr': '<f4', 1: 2}")), "header key 1 is not known");
  EXPECT_CONTAINS(
      error_of(make_npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}")),
      "header key 'descr' appears twice");
}

TEST(npy, MalformedFortranOrder) {
  const std::string message = error_of(make_npy(
      "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", std::vector<std::byte>(16)));
  EXPECT_CONTAINS(message, "header field 'fortran_order' is True, expected False");
  EXPECT_CONTAINS(error_of(make_npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (), }")),
                  "header field 'fortran_order' is 0, expected False");
}

TEST(npy, MalformedBigEndianDescr) {
  EXPECT_EQ(error_of(make_npy("{'descr': '>f4', 'fortran_order': False, 'shape': (), }")),
            "x.npy: header field 'descr' is '>f4', expected a little-endian dtype such as '<f4'");
}

TEST(npy, MalformedUnsupportedDescr) {
  for (const char* descr : {"'<c8'", "'<u4'", "'|S3'", "'<f4 '", "''", "'|O'"}) {
    const std::string message = error_of(
        make_npy("{'descr': " + std::string(descr) + ", 'fortran_order': False, 'shape': (), }"));
    EXPECT_CONTAINS(message, "header field 'descr' is " + std::string(descr) + ", expected one of");
  }
  EXPECT_CONTAINS(
      error_of(make_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (), }")),
      "header field 'descr' is [('a', '<f4')], expected a string");
}

TEST(npy, MalformedUint16OnlyAsDeclaredBFloat16) {
  const std::vector<std::byte> file =
      make_npy("{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", to_bytes({0x80, 0x3f}));
  EXPECT_CONTAINS(error_of(file), "header field 'descr' is '<u2', expected one of");
  EXPECT_CONTAINS(error_of(file, DType::float16), "header field 'descr' is '<u2'");
  const Array array = parse_npy(file, "x.npy", DType::bfloat16);
  EXPECT_EQ(array.values<BFloat16>()[0].to_float(), 1.0f);
}

TEST(npy, MalformedDeclaredDTypeDiffers) {
  const std::vector<std::byte> file = make_npy(f4_dict("()"), to_bytes({0, 0, 0, 0}));
  EXPECT_EQ(error_of(file, DType::int32),
            "x.npy: header field 'descr' is '<f4' (float32), expected '<i4' for the declared "
            "dtype int32");
  EXPECT_CONTAINS(error_of(file, DType::bfloat16),
                  "expected '<u2' for the declared dtype bfloat16");
}

TEST(npy, MalformedNegativeDimension) {
  EXPECT_CONTAINS(error_of(make_npy(f4_dict("(4, -3)"))),
                  "header field 'shape' is (4, -3), expected non-negative dimensions but found -3");
}

TEST(npy, MalformedNonIntegerDimensions) {
  for (const char* shape :
       {"(4, 2.5)", "('4', 3)", "(4, None)", "(True,)", "(0x10,)", "(1e3,)", "((2, 3),)"}) {
    EXPECT_CONTAINS(error_of(make_npy(f4_dict(shape))),
                    "header field 'shape' is " + std::string(shape) + ", expected a tuple of");
  }
}

TEST(npy, MalformedShapeIsNotATuple) {
  for (const char* shape : {"[4, 3]", "(5)", "5", "'(4, 3)'", "{}"}) {
    EXPECT_CONTAINS(error_of(make_npy(f4_dict(shape))),
                    "header field 'shape' is " + std::string(shape) + ", expected a tuple");
  }
}

TEST(npy, MalformedDimensionsTooLarge) {
  EXPECT_CONTAINS(error_of(make_npy(f4_dict("(99999999999999999999,)"))),
                  "expected dimensions below 2^63 but found 99999999999999999999");
  // Each dimension fits, their product does not: refused before any size is computed.
  EXPECT_CONTAINS(error_of(make_npy(f4_dict("(1099511627776, 1099511627776, 0)"))),
                  "header field 'shape' is (1099511627776, 1099511627776, 0), expected a shape");
  EXPECT_CONTAINS(error_of(make_npy(f4_dict("(4611686018427387904,)"))), "data fits in 2^63 bytes");
}

TEST(npy, MalformedDataTooShort) {
  EXPECT_EQ(error_of(make_npy(f4_dict("(4, 3)"), std::vector<std::byte>(40))),
            "x.npy: data is 40 bytes, expected 48 for float32 (4, 3)");
  EXPECT_EQ(error_of(make_npy(f4_dict("(4611686018427387,)"), std::vector<std::byte>(8))),
            "x.npy: data is 8 bytes, expected 18446744073709548 for float32 (4611686018427387,)");
}

TEST(npy, MalformedTrailingBytes) {
  EXPECT_EQ(error_of(make_npy(f4_dict("(4, 3)"), std::vector<std::byte>(52))),
            "x.npy: data is 52 bytes, expected 48 for float32 (4, 3)");
  EXPECT_EQ(error_of(make_npy(f4_dict("(0,)"), std::vector<std::byte>(1))),
            "x.npy: data is 1 bytes, expected 0 for float32 (0,)");
}

TEST(npy, MalformedBoolBytesOtherThanZeroOrOne) {
  const std::vector<std::byte> file =
      make_npy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", to_bytes({1, 2, 0}));
  EXPECT_EQ(error_of(file), "x.npy: data byte 1 of a bool array is 2, expected 0 or 1");
}

}  // namespace
}  // namespace spmd
