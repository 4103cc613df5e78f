#include "support/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <optional>
#include <system_error>
#include <utility>

#include "reference/check.h"
#include "reference/error.h"
#include "support/wide_int.h"

namespace spmd {
namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
// Digits beyond this many would not fit the WideInt that holds them; no real value needs them.
constexpr std::size_t kMaxSignificantDigits = 36;

// ---------------------------------------------------------------------------------------------
// Error messages

// What one parser reads, for its error messages.
struct QuantityKind {
  std::string_view noun;        // "a size"
  std::string_view examples;    // "\"80GiB\", \"16GB\" or \"512MiB\""
  std::string_view whole_unit;  // "bytes": integer results are whole numbers of this
  std::string_view maximum;     // the largest value, for "is too large" errors
  bool zero_allowed = true;
};

constexpr QuantityKind kSize{"a size", R"("80GiB", "16GB" or "512MiB")", "bytes",
                             "9223372036854775807 bytes", true};
constexpr QuantityKind kBandwidth{"a bandwidth", R"("100GB/s", "400Gb/s" or "25GiB/s")", "bytes/s",
                                  "9223372036854775807 bytes/s", false};
constexpr QuantityKind kDuration{"a duration", R"("1.5us", "500ns" or "2ms")", "ps",
                                 "9223372036854775807 ps", true};
constexpr QuantityKind kComputeRate{"a compute rate", R"("989TFLOP/s", "989 TFLOPS" or "1.5e15")",
                                    "FLOP/s", "1.7976931348623157e308 FLOP/s", false};

// The text in double quotes, escaped so that the message stays on one line.
std::string quoted(std::string_view text) {
  constexpr std::size_t kMaxShown = 60;
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > kMaxShown) out += "...";
  return out + "\"";
}

[[noreturn]] void fail(std::string_view field, std::string_view text, std::string_view problem,
                       std::string_view expected) {
  throw Error(std::string(field) + ": " + quoted(text) + " " + std::string(problem) +
              ", expected " + std::string(expected));
}

[[noreturn]] void fail_not_a(const QuantityKind& kind, std::string_view field,
                             std::string_view text) {
  fail(field, text, "is not " + std::string(kind.noun),
       "a number with a unit like " + std::string(kind.examples));
}

[[noreturn]] void fail_out_of_range(const QuantityKind& kind, std::string_view field,
                                    std::string_view text) {
  const std::string bound = kind.zero_allowed ? " >= 0" : " > 0";
  fail(field, text, kind.zero_allowed ? "is negative" : "is not positive",
       std::string(kind.noun) + bound + " like " + std::string(kind.examples));
}

[[noreturn]] void fail_too_large(const QuantityKind& kind, std::string_view field,
                                 std::string_view text) {
  fail(field, text, "is too large", "at most " + std::string(kind.maximum));
}

[[noreturn]] void fail_not_whole(const QuantityKind& kind, std::string_view field,
                                 std::string_view text) {
  fail(field, text, "is not a whole number of " + std::string(kind.whole_unit),
       std::string(kind.noun) + " like " + std::string(kind.examples));
}

// ---------------------------------------------------------------------------------------------
// Numbers: "1.5", "1e9", ".5", "-2" read as a sign, significant digits and a power of ten.

struct Decimal {
  bool negative = false;
  std::string digits;         // significant digits, no leading or trailing zeros; empty for zero
  std::int64_t exponent = 0;  // value = digits * 10^exponent
};

struct Quantity {
  Decimal number;
  std::string_view unit;  // what follows the number and any spaces; may be empty
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t'; }

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// Reads digits from text[pos...] into `digits`; returns how many were read.
std::size_t read_digits(std::string_view text, std::size_t& pos, std::string& digits) {
  const std::size_t start = pos;
  while (pos < text.size() && is_digit(text[pos])) digits += text[pos++];
  return pos - start;
}

// "e-3" at text[pos...]: consumed only when an exponent is really there, so the "E" of
// "1EFLOP/s" stays part of the unit. Clamped: no meaningful exponent is anywhere near the bound.
std::int64_t read_exponent(std::string_view text, std::size_t& pos) {
  std::size_t p = pos;
  if (p >= text.size() || (text[p] != 'e' && text[p] != 'E')) return 0;
  ++p;
  bool negative = false;
  if (p < text.size() && (text[p] == '+' || text[p] == '-')) negative = text[p++] == '-';
  if (p >= text.size() || !is_digit(text[p])) return 0;
  std::int64_t exponent = 0;
  for (; p < text.size() && is_digit(text[p]); ++p) {
    exponent = std::min<std::int64_t>(exponent * 10 + (text[p] - '0'), 1'000'000);
  }
  pos = p;
  return negative ? -exponent : exponent;
}

// Leading zeros dropped, trailing zeros moved into the exponent.
Decimal normalized(bool negative, std::string digits, std::int64_t exponent) {
  const std::size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return Decimal{false, "", 0};  // -0 is 0 (the units fuzzer)
  digits.erase(0, first);
  while (digits.back() == '0') {
    digits.pop_back();
    ++exponent;
  }
  return Decimal{negative, std::move(digits), exponent};
}

std::optional<Quantity> split_quantity(std::string_view text) {
  text = trimmed(text);
  std::size_t pos = 0;
  bool negative = false;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) negative = text[pos++] == '-';
  std::string digits;
  std::size_t digit_count = read_digits(text, pos, digits);
  std::int64_t exponent = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const std::size_t fraction_digits = read_digits(text, pos, digits);
    digit_count += fraction_digits;
    exponent -= static_cast<std::int64_t>(fraction_digits);
  }
  if (digit_count == 0) return std::nullopt;
  exponent += read_exponent(text, pos);
  std::string_view unit = text.substr(pos);
  while (!unit.empty() && is_space(unit.front())) unit.remove_prefix(1);
  return Quantity{normalized(negative, std::move(digits), exponent), unit};
}

WideInt to_wide_int(const std::string& digits) {
  WideInt value = 0;
  for (char c : digits) value = value * 10 + (c - '0');
  return value;
}

// ---------------------------------------------------------------------------------------------
// Exact scaling: value * multiplier / divisor, in integers.

enum class Scaling { whole, fraction, too_large, too_many_digits };

struct Scaled {
  Scaling status = Scaling::whole;
  std::int64_t value = 0;
};

// Divides the factors `prime` (2 or 5) out of a and then b, `count` of them in all; returns how
// many could not be removed.
std::int64_t cancel_prime(WideInt& a, WideInt& b, int prime, std::int64_t count) {
  for (WideInt* n : {&a, &b}) {
    while (count > 0 && *n % prime == 0) {
      *n /= prime;
      --count;
    }
  }
  return count;
}

// Removes the common factors of `divisor` from a and then b; returns what is left of divisor.
WideInt cancel_divisor(WideInt& a, WideInt& b, WideInt divisor) {
  for (WideInt* n : {&a, &b}) {
    WideInt x = *n, y = divisor;
    while (y != 0) x = std::exchange(y, x % y);  // x = gcd(*n, divisor)
    *n /= x;
    divisor /= x;
  }
  return divisor;
}

// number * multiplier / divisor as a whole int64. A power of ten below one, 10^-k = 1/(2^k 5^k),
// is cancelled prime by prime rather than formed, so long fractions cannot overflow.
Scaled scale_exactly(const Decimal& number, std::int64_t multiplier, std::int64_t divisor) {
  SPMD_CHECK(!number.negative && multiplier > 0 && divisor > 0,
             "scale_exactly takes a number >= 0 and a positive unit");
  if (number.digits.empty()) return {};
  if (number.digits.size() > kMaxSignificantDigits) return {Scaling::too_many_digits};
  WideInt digits = to_wide_int(number.digits);
  WideInt scale = multiplier;
  if (number.exponent < 0) {
    const std::int64_t k = -number.exponent;
    if (cancel_prime(digits, scale, 2, k) > 0 || cancel_prime(digits, scale, 5, k) > 0) {
      return {Scaling::fraction};
    }
  }
  if (cancel_divisor(digits, scale, divisor) != 1) return {Scaling::fraction};
  WideInt value = 0;
  if (__builtin_mul_overflow(digits, scale, &value) || value > kInt64Max) {
    return {Scaling::too_large};
  }
  for (std::int64_t k = 0; k < number.exponent; ++k) {
    value *= 10;
    if (value > kInt64Max) return {Scaling::too_large};
  }
  return {Scaling::whole, static_cast<std::int64_t>(value)};
}

// ---------------------------------------------------------------------------------------------
// Units

struct Unit {
  std::string_view name;
  std::int64_t multiplier = 1;
  std::int64_t divisor = 1;  // 8 for bits
};

constexpr std::int64_t kKiB = std::int64_t{1} << 10;

constexpr std::array<Unit, 10> kByteUnits{{
    {"B", 1},
    {"kB", 1'000},
    {"KB", 1'000},
    {"MB", 1'000'000},
    {"GB", 1'000'000'000},
    {"TB", 1'000'000'000'000},
    {"KiB", kKiB},
    {"MiB", kKiB* kKiB},
    {"GiB", kKiB* kKiB* kKiB},
    {"TiB", kKiB* kKiB* kKiB* kKiB},
}};

// Bit rates are written with decimal prefixes only ("400Gb/s", "100Gbit/s").
constexpr std::array<Unit, 6> kBitPrefixes{{
    {"", 1, 8},
    {"k", 1'000, 8},
    {"K", 1'000, 8},
    {"M", 1'000'000, 8},
    {"G", 1'000'000'000, 8},
    {"T", 1'000'000'000'000, 8},
}};

constexpr std::array<Unit, 7> kDurationUnits{{
    {"ps", 1},
    {"ns", 1'000},
    {"us", 1'000'000},
    {"\u00b5s", 1'000'000},  // micro sign
    {"\u03bcs", 1'000'000},  // Greek mu
    {"ms", 1'000'000'000},
    {"s", 1'000'000'000'000},
}};

template <std::size_t N>
std::optional<Unit> find_unit(const std::array<Unit, N>& units, std::string_view name) {
  for (const Unit& unit : units) {
    if (unit.name == name) return unit;
  }
  return std::nullopt;
}

std::optional<Unit> find_bandwidth_unit(std::string_view name) {
  if (name.empty()) return Unit{"", 1};  // plain bytes/s
  if (!name.ends_with("/s")) return std::nullopt;
  name.remove_suffix(2);
  if (std::optional<Unit> bytes = find_unit(kByteUnits, name)) return bytes;
  for (std::string_view bit : {"bit", "b"}) {
    if (name.ends_with(bit)) {
      return find_unit(kBitPrefixes, name.substr(0, name.size() - bit.size()));
    }
  }
  return std::nullopt;
}

// The power of ten of a FLOP/s unit: "TFLOP/s" and "TFLOPS" are 12; "" (plain) is 0.
std::optional<int> flops_unit_exponent(std::string_view name) {
  if (name.empty()) return 0;
  for (std::string_view suffix : {"FLOP/s", "FLOPS"}) {
    if (!name.ends_with(suffix)) continue;
    const std::string_view prefix = name.substr(0, name.size() - suffix.size());
    constexpr std::string_view kPrefixes = "kMGTPE";
    if (prefix.empty()) return 0;
    if (prefix.size() != 1 || kPrefixes.find(prefix[0]) == std::string_view::npos) break;
    return 3 * (1 + static_cast<int>(kPrefixes.find(prefix[0])));
  }
  return std::nullopt;
}

// The shared tail of the integer parsers: sign, exact scaling, range.
std::int64_t scaled_or_fail(const QuantityKind& kind, const Quantity& quantity, const Unit& unit,
                            std::string_view field, std::string_view text) {
  const bool zero = quantity.number.digits.empty();
  if (quantity.number.negative && !zero) fail_out_of_range(kind, field, text);
  if (zero && !kind.zero_allowed) fail_out_of_range(kind, field, text);
  const Scaled scaled = scale_exactly(quantity.number, unit.multiplier, unit.divisor);
  if (scaled.status == Scaling::fraction) fail_not_whole(kind, field, text);
  if (scaled.status == Scaling::too_large) fail_too_large(kind, field, text);
  if (scaled.status == Scaling::too_many_digits) {
    fail(field, text, "is too precise",
         fmt::format("at most {} significant digits", kMaxSignificantDigits));
  }
  return scaled.value;
}

// ---------------------------------------------------------------------------------------------
// Formatting

// value / unit written exactly as a decimal; `unit` is a power of 2 or 10, so it terminates.
std::string exact_quotient(std::uint64_t value, std::uint64_t unit) {
  std::string text = fmt::format("{}", value / unit);
  std::uint64_t remainder = value % unit;
  if (remainder != 0) text += '.';
  while (remainder != 0) {
    remainder *= 10;  // remainder < unit <= 2^40: no overflow
    text += static_cast<char>('0' + remainder / unit);
    remainder %= unit;
  }
  return text;
}

// thousandths / 1000 with at most 3 decimals and no trailing zeros: "1.5", "80", "1.001".
std::string thousandths_text(std::uint64_t thousandths) {
  std::string fraction = fmt::format("{:03}", thousandths % 1000);
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  if (fraction.empty()) return fmt::format("{}", thousandths / 1000);
  return fmt::format("{}.{}", thousandths / 1000, fraction);
}

struct DisplayUnit {
  std::string_view name;
  std::uint64_t size = 1;
};

// magnitude in the largest unit not above it, rounded half up to 3 decimals; a value that
// rounds up to the next unit ("1024 KiB") is shown in that unit ("1 MiB").
template <std::size_t N>
std::string rounded_text(std::uint64_t magnitude, const std::array<DisplayUnit, N>& units,
                         std::uint64_t step) {
  std::size_t u = 0;
  while (u + 1 < N && magnitude >= units[u + 1].size) ++u;
  auto thousandths = [&](std::size_t k) {
    return static_cast<std::uint64_t>(
        (static_cast<UnsignedWideInt>(magnitude) * 1000 + units[k].size / 2) / units[k].size);
  };
  if (u + 1 < N && thousandths(u) >= step * 1000) ++u;
  return thousandths_text(thousandths(u)) + " " + std::string(units[u].name);
}

std::uint64_t magnitude_of(std::int64_t value) {
  return value < 0 ? ~static_cast<std::uint64_t>(value) + 1 : static_cast<std::uint64_t>(value);
}

// The shortest of `value` written exactly in each unit not above it (or "0" + the first).
template <std::size_t N>
std::string shortest_exact_text(std::int64_t value, const std::array<DisplayUnit, N>& units,
                                std::string_view suffix) {
  const std::uint64_t magnitude = magnitude_of(value);
  std::string best;
  for (const DisplayUnit& unit : units) {
    if (magnitude < unit.size && !(magnitude == 0 && unit.size == 1)) continue;
    std::string text = exact_quotient(magnitude, unit.size) + std::string(unit.name);
    if (best.empty() || text.size() < best.size()) best = std::move(text);
  }
  return (value < 0 ? "-" : "") + best + std::string(suffix);
}

constexpr std::array<DisplayUnit, 7> kBinaryDisplayUnits{{
    {"B", 1},
    {"KiB", std::uint64_t{1} << 10},
    {"MiB", std::uint64_t{1} << 20},
    {"GiB", std::uint64_t{1} << 30},
    {"TiB", std::uint64_t{1} << 40},
    {"PiB", std::uint64_t{1} << 50},
    {"EiB", std::uint64_t{1} << 60},
}};

constexpr std::array<DisplayUnit, 5> kDurationDisplayUnits{{
    {"ps", 1},
    {"ns", 1'000},
    {"us", 1'000'000},
    {"ms", 1'000'000'000},
    {"s", 1'000'000'000'000},
}};

// Larger units first, so that a tie in length goes to the larger unit; binary before decimal.
constexpr std::array<DisplayUnit, 9> kExactByteUnits{{
    {"TiB", std::uint64_t{1} << 40},
    {"GiB", std::uint64_t{1} << 30},
    {"MiB", std::uint64_t{1} << 20},
    {"KiB", std::uint64_t{1} << 10},
    {"TB", 1'000'000'000'000},
    {"GB", 1'000'000'000},
    {"MB", 1'000'000},
    {"kB", 1'000},
    {"B", 1},
}};

constexpr std::array<DisplayUnit, 5> kExactDurationUnits{{
    {"s", 1'000'000'000'000},
    {"ms", 1'000'000'000},
    {"us", 1'000'000},
    {"ns", 1'000},
    {"ps", 1},
}};

}  // namespace

std::int64_t parse_bytes(std::string_view text, std::string_view field) {
  const std::optional<Quantity> quantity = split_quantity(text);
  if (!quantity) fail_not_a(kSize, field, text);
  const std::optional<Unit> unit =
      quantity->unit.empty() ? Unit{"", 1} : find_unit(kByteUnits, quantity->unit);
  if (!unit) fail_not_a(kSize, field, text);
  return scaled_or_fail(kSize, *quantity, *unit, field, text);
}

std::int64_t parse_bandwidth_bytes_per_s(std::string_view text, std::string_view field) {
  const std::optional<Quantity> quantity = split_quantity(text);
  if (!quantity) fail_not_a(kBandwidth, field, text);
  const std::optional<Unit> unit = find_bandwidth_unit(quantity->unit);
  if (!unit) fail_not_a(kBandwidth, field, text);
  return scaled_or_fail(kBandwidth, *quantity, *unit, field, text);
}

std::int64_t parse_duration_ps(std::string_view text, std::string_view field) {
  const std::optional<Quantity> quantity = split_quantity(text);
  if (!quantity) fail_not_a(kDuration, field, text);
  // A bare number could be ps, ns or us depending on who wrote it; make them say.
  if (quantity->unit.empty()) {
    fail(field, text, "has no unit", "a duration like " + std::string(kDuration.examples));
  }
  const std::optional<Unit> unit = find_unit(kDurationUnits, quantity->unit);
  if (!unit) fail_not_a(kDuration, field, text);
  return scaled_or_fail(kDuration, *quantity, *unit, field, text);
}

double parse_flops(std::string_view text, std::string_view field) {
  const std::optional<Quantity> quantity = split_quantity(text);
  if (!quantity) fail_not_a(kComputeRate, field, text);
  const std::optional<int> unit_exponent = flops_unit_exponent(quantity->unit);
  if (!unit_exponent) fail_not_a(kComputeRate, field, text);
  const Decimal& number = quantity->number;
  if (number.negative || number.digits.empty()) fail_out_of_range(kComputeRate, field, text);
  // from_chars rounds the exact decimal to the nearest double, independent of the locale.
  const std::string scientific =
      fmt::format("{}e{}", number.digits, number.exponent + *unit_exponent);
  double flops = 0;
  const auto [end, error] =
      std::from_chars(scientific.data(), scientific.data() + scientific.size(), flops);
  if (error == std::errc::result_out_of_range) {
    const std::int64_t leading_digit_exponent =
        number.exponent + static_cast<std::int64_t>(number.digits.size()) + *unit_exponent;
    if (leading_digit_exponent > 0) fail_too_large(kComputeRate, field, text);
    fail_out_of_range(kComputeRate, field, text);
  }
  if (error != std::errc() || end != scientific.data() + scientific.size()) {
    fail_not_a(kComputeRate, field, text);
  }
  return flops;
}

std::string format_bytes(std::int64_t bytes) {
  return (bytes < 0 ? "-" : "") + rounded_text(magnitude_of(bytes), kBinaryDisplayUnits, 1024);
}

std::string format_duration_ps(std::int64_t ps) {
  return (ps < 0 ? "-" : "") + rounded_text(magnitude_of(ps), kDurationDisplayUnits, 1000);
}

std::string exact_bytes_text(std::int64_t bytes) {
  return shortest_exact_text(bytes, kExactByteUnits, "");
}

std::string exact_bandwidth_text(std::int64_t bytes_per_s) {
  return shortest_exact_text(bytes_per_s, kExactByteUnits, "/s");
}

std::string exact_duration_text(std::int64_t ps) {
  return shortest_exact_text(ps, kExactDurationUnits, "");
}

std::string exact_flops_text(double flops) {
  // The shortest digits that read back as this double, e.g. "9.89e+14"; then a prefix.
  char buffer[64];
  const auto [end, error] =
      std::to_chars(buffer, buffer + sizeof buffer, flops, std::chars_format::scientific);
  SPMD_CHECK(error == std::errc(), "to_chars: 64 characters hold any double");
  const std::string_view scientific(buffer, static_cast<std::size_t>(end - buffer));
  const std::size_t e = scientific.find('e');
  int exponent = 0;  // of the first digit
  std::from_chars(scientific.data() + e + (scientific[e + 1] == '+' ? 2 : 1), end, exponent);
  if (!(flops > 0) || exponent < 0 || exponent > 20) return std::string(scientific);
  std::string digits;
  for (char c : scientific.substr(0, e)) {
    if (is_digit(c)) digits += c;
  }
  constexpr std::string_view kPrefixes = "kMGTPE";
  const int prefix_exponent = std::min(exponent / 3 * 3, 18);
  const std::size_t integer_digits = static_cast<std::size_t>(exponent - prefix_exponent + 1);
  if (digits.size() <= integer_digits) {
    digits.append(integer_digits - digits.size(), '0');
  } else {
    digits.insert(integer_digits, ".");
  }
  const std::string prefix =
      prefix_exponent == 0 ? "" : std::string(1, kPrefixes[prefix_exponent / 3 - 1]);
  return digits + prefix + "FLOP/s";
}

}  // namespace spmd
