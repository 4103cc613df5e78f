#include "reference/npy.h"

#include <fmt/format.h>

#include <bit>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>
#include <system_error>
#include <utility>

#include "reference/error.h"
#include "reference/input_file.h"

namespace spmd {
namespace {

// Array bytes are copied to and from the file as they lie in memory, which is the file's
// little-endian order only on a little-endian host.
static_assert(std::endian::native == std::endian::little, "npy.cc assumes a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::size_t kVersionBytes = 2;
constexpr std::size_t kArrayAlignBytes = 64;  // NumPy's ARRAY_ALIGN
// NumPy leaves room for the first dimension to grow to this many digits in place.
constexpr std::size_t kGrowthAxisMaxDigits = 21;
constexpr int kMaxNestingDepth = 16;         // header literals deeper than this are refused
constexpr std::size_t kMaxQuotedChars = 80;  // how much of a bad value a message shows

struct DescrEntry {
  std::string_view descr;
  DType dtype;
};

// The descr NumPy writes for each dtype (np.dtype(...).str). bfloat16 is handled apart.
constexpr DescrEntry kDescrs[] = {
    {"<f8", DType::float64}, {"<f4", DType::float32}, {"<f2", DType::float16},
    {"<i8", DType::int64},   {"<i4", DType::int32},   {"|i1", DType::int8},
    {"|u1", DType::uint8},   {"|b1", DType::bool_},
};
constexpr std::string_view kBFloat16Descr = "<u2";  // stored as uint16 bit patterns
constexpr std::string_view kSupportedDescrs =
    "one of '<f8' '<f4' '<f2' '<i8' '<i4' '|i1' '|u1' '|b1' (or '<u2' for a declared bfloat16)";
constexpr std::string_view kExampleDict =
    "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 3), }";

std::string_view descr_of(DType dtype) {
  if (dtype == DType::bfloat16) return kBFloat16Descr;
  for (const DescrEntry& entry : kDescrs) {
    if (entry.dtype == dtype) return entry.descr;
  }
  __builtin_unreachable();
}

// Untrusted text made safe for a one-line message: non-printable bytes become \xNN and long
// text is cut, so a binary or multi-line header cannot break the message format.
std::string printable(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (out.size() >= kMaxQuotedChars) return out + "...";
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte < 0x7f) {
      out += static_cast<char>(byte);
    } else {
      out += fmt::format("\\x{:02x}", byte);
    }
  }
  return out;
}

std::string_view as_chars(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

std::uint32_t read_little_endian(std::span<const std::byte> bytes) {
  std::uint32_t value = 0;
  for (std::size_t i = bytes.size(); i-- > 0;) {
    value = (value << 8) | static_cast<std::uint32_t>(bytes[i]);
  }
  return value;
}

std::string errno_message(int error_number) {
  return std::error_code(error_number, std::generic_category()).message();
}

// ---- A Python literal, as much of Python's syntax as an .npy header uses -------------------

struct PyValue {
  enum class Kind { string, name, number, tuple, list, dict };
  Kind kind = Kind::name;
  std::string_view source;     // the literal as written in the header, for messages
  std::string_view text;       // string contents, name or number token
  std::vector<PyValue> items;  // tuple / list elements; dict keys and values alternating
};

// Recursive descent over the header text. It rejects whatever it does not understand rather
// than guessing, and never reads past the end of the text.
class LiteralParser {
 public:
  LiteralParser(std::string_view text, const std::string& source_name)
      : text_(text), source_name_(source_name) {}

  PyValue parse_document() {
    PyValue value = parse_value(0);
    skip_whitespace();
    if (pos_ != text_.size()) fail("the end of the header after the dict");
    return value;
  }

 private:
  [[noreturn]] void fail(std::string_view expected) const {
    const std::string found =
        pos_ < text_.size() ? "'" + printable(text_.substr(pos_, 1)) + "'" : "the end";
    throw Error(fmt::format(
        "{}: header is not a Python literal: found {} at offset {}, expected {}, in \"{}\"",
        source_name_, found, pos_, expected, printable(text_)));
  }

  void skip_whitespace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  PyValue parse_value(int depth) {
    if (depth > kMaxNestingDepth) fail("at most 16 levels of nesting");
    skip_whitespace();
    if (pos_ >= text_.size()) fail("a value");
    const char c = text_[pos_];
    if (c == '\'' || c == '"') return parse_string();
    if (c == '(') return parse_sequence(PyValue::Kind::tuple, ')', depth);
    if (c == '[') return parse_sequence(PyValue::Kind::list, ']', depth);
    if (c == '{') return parse_dict(depth);
    return parse_token();
  }

  PyValue parse_string() {
    const std::size_t start = pos_;
    const char quote = text_[pos_++];
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' || text_[pos_] == '\n') fail("a string without escapes");
      ++pos_;
    }
    if (pos_ >= text_.size()) fail("a closing quote");
    ++pos_;
    PyValue value{PyValue::Kind::string, text_.substr(start, pos_ - start), {}, {}};
    value.text = text_.substr(start + 1, pos_ - start - 2);
    return value;
  }

  // Numbers and names: a run of identifier characters, optionally signed.
  PyValue parse_token() {
    const std::size_t start = pos_;
    if (at('-') || at('+')) ++pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '_' || text_[pos_] == '.')) {
      ++pos_;
    }
    const std::string_view token = text_.substr(start, pos_ - start);
    if (token.empty() || token == "-" || token == "+") {
      pos_ = start;
      fail("a string, number, True, False, None, tuple, list or dict");
    }
    const bool is_name = std::isalpha(static_cast<unsigned char>(token[0])) || token[0] == '_';
    if (is_name && token != "True" && token != "False" && token != "None") {
      pos_ = start;
      fail("True, False or None (names are not literals)");
    }
    return {is_name ? PyValue::Kind::name : PyValue::Kind::number, token, token, {}};
  }

  // "(a, b)", "(a,)", "()" are tuples; "(a)" is just a in parentheses, as in Python.
  PyValue parse_sequence(PyValue::Kind kind, char close, int depth) {
    const std::size_t start = pos_++;
    PyValue value{kind, {}, {}, {}};
    bool trailing_comma = false;
    skip_whitespace();
    while (!at(close)) {
      value.items.push_back(parse_value(depth + 1));
      skip_whitespace();
      trailing_comma = at(',');
      if (trailing_comma) {
        ++pos_;
        skip_whitespace();
      } else if (!at(close)) {
        fail(close == ')' ? "',' or ')'" : "',' or ']'");
      }
    }
    ++pos_;
    if (kind == PyValue::Kind::tuple && value.items.size() == 1 && !trailing_comma) {
      PyValue inner = std::move(value.items.front());
      inner.source = text_.substr(start, pos_ - start);
      return inner;
    }
    value.source = text_.substr(start, pos_ - start);
    return value;
  }

  PyValue parse_dict(int depth) {
    const std::size_t start = pos_++;
    PyValue value{PyValue::Kind::dict, {}, {}, {}};
    skip_whitespace();
    while (!at('}')) {
      value.items.push_back(parse_value(depth + 1));
      skip_whitespace();
      if (!at(':')) fail("':' after a dict key");
      ++pos_;
      value.items.push_back(parse_value(depth + 1));
      skip_whitespace();
      if (at(',')) {
        ++pos_;
        skip_whitespace();
      } else if (!at('}')) {
        fail("',' or '}'");
      }
    }
    ++pos_;
    value.source = text_.substr(start, pos_ - start);
    return value;
  }

  std::string_view text_;
  const std::string& source_name_;
  std::size_t pos_ = 0;
};

// ---- Header fields ---------------------------------------------------------------------------

struct HeaderFields {
  const PyValue* descr = nullptr;
  const PyValue* fortran_order = nullptr;
  const PyValue* shape = nullptr;
};

std::string field_is(const std::string& source_name, std::string_view field, const PyValue& value) {
  return source_name + ": header field '" + std::string(field) + "' is " + printable(value.source);
}

HeaderFields find_fields(const PyValue& dict, const std::string& source_name) {
  if (dict.kind != PyValue::Kind::dict) {
    throw Error(source_name + ": header is " + printable(dict.source) +
                ", expected a dict such as " + std::string(kExampleDict));
  }
  HeaderFields fields;
  for (std::size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PyValue& key = dict.items[i];
    const PyValue* value = &dict.items[i + 1];
    const PyValue** slot = nullptr;
    if (key.kind == PyValue::Kind::string) {
      if (key.text == "descr") slot = &fields.descr;
      if (key.text == "fortran_order") slot = &fields.fortran_order;
      if (key.text == "shape") slot = &fields.shape;
    }
    if (slot == nullptr) {
      throw Error(source_name + ": header key " + printable(key.source) +
                  " is not known, expected only 'descr', 'fortran_order' and 'shape'");
    }
    if (*slot != nullptr) {
      throw Error(source_name + ": header key " + printable(key.source) +
                  " appears twice, expected each key once");
    }
    *slot = value;
  }
  for (auto [name, slot] :
       {std::pair{"descr", fields.descr}, std::pair{"fortran_order", fields.fortran_order},
        std::pair{"shape", fields.shape}}) {
    if (slot == nullptr) {
      throw Error(source_name + ": header has no field '" + name +
                  "', expected the keys 'descr', 'fortran_order' and 'shape'");
    }
  }
  return fields;
}

DType descr_dtype(const PyValue& descr, const std::string& source_name,
                  std::optional<DType> declared) {
  const std::string prefix = field_is(source_name, "descr", descr);
  if (descr.kind != PyValue::Kind::string) {
    throw Error(prefix + ", expected a string such as '<f4' (structured dtypes are not supported)");
  }
  if (descr.text == kBFloat16Descr) {
    if (declared == DType::bfloat16) return DType::bfloat16;
    throw Error(prefix + ", expected " + std::string(kSupportedDescrs) +
                "; uint16 is read only as bfloat16 bit patterns when the dtype is declared "
                "bfloat16");
  }
  for (const DescrEntry& entry : kDescrs) {
    if (descr.text != entry.descr) continue;
    if (declared.has_value() && *declared != entry.dtype) {
      throw Error(prefix + " (" + std::string(dtype_name(entry.dtype)) + "), expected '" +
                  std::string(descr_of(*declared)) + "' for the declared dtype " +
                  std::string(dtype_name(*declared)));
    }
    return entry.dtype;
  }
  if (!descr.text.empty() && descr.text.front() == '>') {
    throw Error(prefix + ", expected a little-endian dtype such as '<" +
                printable(descr.text.substr(1)) + "'");
  }
  throw Error(prefix + ", expected " + std::string(kSupportedDescrs));
}

void check_c_order(const PyValue& fortran_order, const std::string& source_name) {
  if (fortran_order.kind == PyValue::Kind::name && fortran_order.text == "False") return;
  const std::string prefix = field_is(source_name, "fortran_order", fortran_order);
  if (fortran_order.kind == PyValue::Kind::name && fortran_order.text == "True") {
    throw Error(prefix + ", expected False (only C-order arrays are supported)");
  }
  throw Error(prefix + ", expected False");
}

// A dimension must be a plain decimal integer; Python's other integer spellings (0x10, 1_000)
// never appear in NumPy output, so they are refused rather than half-supported.
std::int64_t parse_dimension(const PyValue& item, const std::string& prefix) {
  const std::string_view digits = item.text;
  bool all_digits = item.kind == PyValue::Kind::number && !digits.empty();
  const bool negative = all_digits && digits.front() == '-';
  for (std::size_t i = negative ? 1 : 0; all_digits && i < digits.size(); ++i) {
    all_digits = digits[i] >= '0' && digits[i] <= '9';
  }
  if (!all_digits || (negative && digits.size() == 1)) {
    throw Error(prefix + ", expected a tuple of non-negative integers such as (4, 3)");
  }
  if (negative) {
    throw Error(prefix + ", expected non-negative dimensions but found " + printable(digits));
  }
  std::int64_t dim = 0;
  for (char digit : digits) {
    if (__builtin_mul_overflow(dim, 10, &dim) || __builtin_add_overflow(dim, digit - '0', &dim)) {
      throw Error(prefix + ", expected dimensions below 2^63 but found " + printable(digits));
    }
  }
  return dim;
}

// Also checks that the data size in bytes fits in int64, so that no later product overflows.
Shape parse_shape(const PyValue& shape_value, DType dtype, const std::string& source_name) {
  const std::string prefix = field_is(source_name, "shape", shape_value);
  if (shape_value.kind != PyValue::Kind::tuple) {
    throw Error(prefix + ", expected a tuple of non-negative integers such as (4, 3) or (5,)");
  }
  // NumPy 2's limit (NPY_MAXDIMS); NumPy 1 allowed 32.
  constexpr std::size_t kMostDimensions = 64;
  if (shape_value.items.size() > kMostDimensions) {
    throw Error(fmt::format("{}, a shape of {} dimensions, expected at most {}", prefix,
                            shape_value.items.size(), kMostDimensions));
  }
  Shape shape;
  std::int64_t nonzero_bytes = static_cast<std::int64_t>(dtype_size_bytes(dtype));
  for (const PyValue& item : shape_value.items) {
    const std::int64_t dim = parse_dimension(item, prefix);
    if (dim != 0 && __builtin_mul_overflow(nonzero_bytes, dim, &nonzero_bytes)) {
      throw Error(prefix + ", expected a shape whose " + std::string(dtype_name(dtype)) +
                  " data fits in 2^63 bytes");
    }
    shape.push_back(dim);
  }
  return shape;
}

// ---- File layout -----------------------------------------------------------------------------

struct Preamble {
  std::size_t header_offset = 0;  // where the dict text starts
  std::size_t header_bytes = 0;
};

std::string too_short(const std::string& source_name, std::size_t file_bytes,
                      std::size_t needed_bytes, std::string_view what) {
  return fmt::format("{}: file is {} bytes, expected at least {} for the {} of an .npy file",
                     source_name, file_bytes, needed_bytes, what);
}

Preamble parse_preamble(std::span<const std::byte> bytes, const std::string& source_name) {
  const std::string_view chars = as_chars(bytes);
  if (chars.size() < kMagic.size()) {
    throw Error(too_short(source_name, chars.size(), kMagic.size(), "magic string"));
  }
  if (chars.substr(0, kMagic.size()) != kMagic) {
    throw Error(source_name + ": magic string is '" + printable(chars.substr(0, kMagic.size())) +
                "', expected '\\x93NUMPY' (not an .npy file)");
  }
  const std::size_t version_end = kMagic.size() + kVersionBytes;
  if (chars.size() < version_end) {
    throw Error(too_short(source_name, chars.size(), version_end, "format version"));
  }
  const auto major = static_cast<unsigned>(bytes[kMagic.size()]);
  const auto minor = static_cast<unsigned>(bytes[kMagic.size() + 1]);
  if (minor != 0 || major < 1 || major > 3) {
    throw Error(fmt::format("{}: format version is {}.{}, expected 1.0, 2.0 or 3.0", source_name,
                            major, minor));
  }
  const std::size_t length_bytes = major == 1 ? 2 : 4;  // uint16 in 1.0, uint32 since 2.0
  const std::size_t length_end = version_end + length_bytes;
  if (chars.size() < length_end) {
    throw Error(too_short(source_name, chars.size(), length_end, "header length"));
  }
  Preamble preamble;
  preamble.header_offset = length_end;
  preamble.header_bytes = read_little_endian(bytes.subspan(version_end, length_bytes));
  if (preamble.header_bytes > chars.size() - length_end) {
    throw Error(fmt::format(
        "{}: header length is {} bytes, expected at most the {} bytes that follow it in the file",
        source_name, preamble.header_bytes, chars.size() - length_end));
  }
  return preamble;
}

void check_bool_bytes(std::span<const std::byte> data, const std::string& source_name) {
  for (std::size_t i = 0; i < data.size(); ++i) {
    const auto byte = static_cast<unsigned>(data[i]);
    if (byte > 1) {
      throw Error(fmt::format("{}: data byte {} of a bool array is {}, expected 0 or 1",
                              source_name, i, byte));
    }
  }
}

// NumPy's header dict, keys sorted, plus the spare spaces NumPy leaves for the first
// dimension to grow in place (so our files match np.save byte for byte).
std::string header_dict(const Array& array) {
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                 descr_of(array.dtype()), shape_to_string(array.shape()));
  if (array.rank() > 0) {
    const std::size_t first_dim_digits = fmt::formatted_size("{}", array.dim(0));
    if (first_dim_digits < kGrowthAxisMaxDigits) {
      dict.append(kGrowthAxisMaxDigits - first_dim_digits, ' ');
    }
  }
  return dict;
}

void append_little_endian(std::vector<std::byte>& out, std::uint32_t value, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) out.push_back(std::byte((value >> (8 * i)) & 0xffu));
}

using FilePtr = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

}  // namespace

Array parse_npy(std::span<const std::byte> bytes, const std::string& source_name,
                std::optional<DType> declared) {
  const Preamble preamble = parse_preamble(bytes, source_name);
  const std::string_view header_text =
      as_chars(bytes.subspan(preamble.header_offset, preamble.header_bytes));
  const PyValue dict = LiteralParser(header_text, source_name).parse_document();
  const HeaderFields fields = find_fields(dict, source_name);
  const DType dtype = descr_dtype(*fields.descr, source_name, declared);
  check_c_order(*fields.fortran_order, source_name);
  Shape shape = parse_shape(*fields.shape, dtype, source_name);

  const std::span<const std::byte> data =
      bytes.subspan(preamble.header_offset + preamble.header_bytes);
  const std::size_t expected_bytes =
      static_cast<std::size_t>(element_count(shape)) * dtype_size_bytes(dtype);
  if (data.size() != expected_bytes) {
    throw Error(fmt::format("{}: data is {} bytes, expected {} for {} {}", source_name, data.size(),
                            expected_bytes, dtype_name(dtype), shape_to_string(shape)));
  }
  if (dtype == DType::bool_) check_bool_bytes(data, source_name);
  return Array::from_bytes(dtype, std::move(shape),
                           std::vector<std::byte>(data.begin(), data.end()));
}

Array read_npy(const std::string& path, std::optional<DType> declared) {
  const std::string bytes = read_input_file(path, "the .npy file", kMostNpyFileBytes);
  return parse_npy(std::as_bytes(std::span(bytes.data(), bytes.size())), path_for_message(path),
                   declared);
}

std::vector<std::byte> serialize_npy(const Array& array) {
  const std::string dict = header_dict(array);
  // NumPy pads with spaces and a final '\n' so that the data starts on a 64-byte boundary,
  // adding a whole 64 bytes when already aligned; format 2.0 only when 1.0's uint16 is too small.
  auto padded_header_bytes = [&](std::size_t preamble_bytes) {
    const std::size_t unpadded = dict.size() + 1;
    return unpadded + kArrayAlignBytes - (preamble_bytes + unpadded) % kArrayAlignBytes;
  };
  std::uint8_t major = 1;
  std::size_t length_bytes = 2;
  std::size_t header_bytes = padded_header_bytes(kMagic.size() + kVersionBytes + length_bytes);
  if (header_bytes > 0xffff) {
    major = 2;
    length_bytes = 4;
    header_bytes = padded_header_bytes(kMagic.size() + kVersionBytes + length_bytes);
  }
  std::vector<std::byte> out;
  out.reserve(kMagic.size() + kVersionBytes + length_bytes + header_bytes + array.size_bytes());
  for (char c : kMagic) out.push_back(static_cast<std::byte>(c));
  out.push_back(std::byte{major});
  out.push_back(std::byte{0});
  append_little_endian(out, static_cast<std::uint32_t>(header_bytes), length_bytes);
  for (char c : dict) out.push_back(static_cast<std::byte>(c));
  out.resize(out.size() + header_bytes - dict.size() - 1, std::byte{' '});
  out.push_back(std::byte{'\n'});
  out.insert(out.end(), array.bytes().begin(), array.bytes().end());
  return out;
}

void write_npy(const std::string& path, const Array& array) {
  const std::vector<std::byte> bytes = serialize_npy(array);
  FilePtr file(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!file) throw Error(path + ": cannot open file for writing (" + errno_message(errno) + ")");
  if (std::fwrite(bytes.data(), 1, bytes.size(), file.get()) != bytes.size()) {
    throw Error(path + ": cannot write file (" + errno_message(errno) + ")");
  }
  if (std::fclose(file.release()) != 0) {
    throw Error(path + ": cannot write file (" + errno_message(errno) + ")");
  }
}

}  // namespace spmd
