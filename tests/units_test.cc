// Units in machine files: exact values for every unit (the decimal read as written, never via a
// double), exact one-line messages for bad input, the report formats, and the law that the
// exact texts read back as the same value.

#include "support/units.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include "reference/error.h"
#include "tests/error_of.h"

namespace spmd {
namespace {

using test_errors::error_of;

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = kKiB * 1024;
constexpr std::int64_t kGiB = kMiB * 1024;

std::string bytes_error(std::string_view text) {
  return error_of([&] { parse_bytes(text, "memory"); });
}
std::string bandwidth_error(std::string_view text) {
  return error_of([&] { parse_bandwidth_bytes_per_s(text, "link.bandwidth"); });
}
std::string duration_error(std::string_view text) {
  return error_of([&] { parse_duration_ps(text, "link.latency"); });
}
std::string flops_error(std::string_view text) {
  return error_of([&] { parse_flops(text, "compute.peak_flops"); });
}

TEST(ParseBytes, BinaryUnitsArePowersOf1024) {
  EXPECT_EQ(parse_bytes("80GiB", "f"), 80 * kGiB);
  EXPECT_EQ(parse_bytes("80 GiB", "f"), 80 * kGiB);
  EXPECT_EQ(parse_bytes("512MiB", "f"), 512 * kMiB);
  EXPECT_EQ(parse_bytes("4KiB", "f"), 4096);
  EXPECT_EQ(parse_bytes("2TiB", "f"), 2 * 1024 * kGiB);
  EXPECT_EQ(parse_bytes("1.5GiB", "f"), 1'610'612'736);
  EXPECT_EQ(parse_bytes("1.5KiB", "f"), 1536);
}

TEST(ParseBytes, DecimalUnitsArePowersOf1000) {
  EXPECT_EQ(parse_bytes("16GB", "f"), 16'000'000'000);
  EXPECT_EQ(parse_bytes("1kB", "f"), 1000);
  EXPECT_EQ(parse_bytes("1KB", "f"), 1000);
  EXPECT_EQ(parse_bytes("3MB", "f"), 3'000'000);
  EXPECT_EQ(parse_bytes("2TB", "f"), 2'000'000'000'000);
  EXPECT_EQ(parse_bytes("7B", "f"), 7);
}

TEST(ParseBytes, PlainNumbersAreBytes) {
  EXPECT_EQ(parse_bytes("123", "f"), 123);
  EXPECT_EQ(parse_bytes("0", "f"), 0);
  EXPECT_EQ(parse_bytes("  2 TB  ", "f"), 2'000'000'000'000);
  EXPECT_EQ(parse_bytes("1e3", "f"), 1000);
  EXPECT_EQ(parse_bytes("1000000000.0", "f"), 1'000'000'000);  // nlohmann's dump of 1e9
  EXPECT_EQ(parse_bytes("9223372036854775807", "f"), std::numeric_limits<std::int64_t>::max());
}

// Through a double, 1.1 * 1e9 is 1100000000.0000002; the decimal is scaled exactly.
TEST(ParseBytes, DecimalsAreExact) {
  EXPECT_EQ(parse_bytes("1.1GB", "f"), 1'100'000'000);
  EXPECT_EQ(parse_bytes("0.3GB", "f"), 300'000'000);
  EXPECT_EQ(parse_bytes("12.345678MB", "f"), 12'345'678);
  // 1 / 2^40 TiB written out in full is exactly one byte.
  EXPECT_EQ(parse_bytes("9.094947017729282379150390625e-13TiB", "f"), 1);
}

TEST(ParseBytes, BadInputNamesFieldValueAndExpectation) {
  EXPECT_EQ(bytes_error("80 gigs"),
            R"(memory: "80 gigs" is not a size, expected a number with a unit like "80GiB", )"
            R"("16GB" or "512MiB")");
  EXPECT_EQ(bytes_error("1kb"),  // strict case: only KB and kB mean 1000
            R"(memory: "1kb" is not a size, expected a number with a unit like "80GiB", )"
            R"("16GB" or "512MiB")");
  EXPECT_EQ(bytes_error(""),
            R"(memory: "" is not a size, expected a number with a unit like "80GiB", "16GB" or )"
            R"("512MiB")");
  EXPECT_EQ(bytes_error("GiB"),
            R"(memory: "GiB" is not a size, expected a number with a unit like "80GiB", )"
            R"("16GB" or "512MiB")");
  EXPECT_EQ(bytes_error("1.5B"),
            R"(memory: "1.5B" is not a whole number of bytes, expected a size like "80GiB", )"
            R"("16GB" or "512MiB")");
  EXPECT_EQ(bytes_error("-1GB"),
            R"(memory: "-1GB" is negative, expected a size >= 0 like "80GiB", "16GB" or )"
            R"("512MiB")");
  EXPECT_EQ(bytes_error("1e30TB"),
            R"(memory: "1e30TB" is too large, expected at most 9223372036854775807 bytes)");
  EXPECT_EQ(bytes_error("9223372036854775808"),
            R"(memory: "9223372036854775808" is too large, expected at most )"
            R"(9223372036854775807 bytes)");
  EXPECT_EQ(bytes_error("1.0000000000000000000000000000000000001GB"),
            R"(memory: "1.0000000000000000000000000000000000001GB" is too precise, expected at )"
            R"(most 36 significant digits)");
  EXPECT_EQ(bytes_error("1\nGB"),
            R"(memory: "1\x0aGB" is not a size, expected a number with a unit like "80GiB", )"
            R"("16GB" or "512MiB")");
}

TEST(ParseBandwidth, BytesPerSecond) {
  EXPECT_EQ(parse_bandwidth_bytes_per_s("100GB/s", "f"), 100'000'000'000);
  EXPECT_EQ(parse_bandwidth_bytes_per_s("50 GB/s", "f"), 50'000'000'000);
  EXPECT_EQ(parse_bandwidth_bytes_per_s("25GiB/s", "f"), 25 * kGiB);
  EXPECT_EQ(parse_bandwidth_bytes_per_s("3.35TB/s", "f"), 3'350'000'000'000);
  EXPECT_EQ(parse_bandwidth_bytes_per_s("1e9", "f"), 1'000'000'000);
  EXPECT_EQ(parse_bandwidth_bytes_per_s("12", "f"), 12);
}

TEST(ParseBandwidth, BitsPerSecondAreDividedBy8) {
  EXPECT_EQ(parse_bandwidth_bytes_per_s("400Gb/s", "f"), 50'000'000'000);
  EXPECT_EQ(parse_bandwidth_bytes_per_s("400Gbit/s", "f"), 50'000'000'000);
  EXPECT_EQ(parse_bandwidth_bytes_per_s("200 Gbit/s", "f"), 25'000'000'000);
  EXPECT_EQ(parse_bandwidth_bytes_per_s("8b/s", "f"), 1);
  EXPECT_EQ(parse_bandwidth_bytes_per_s("1Tb/s", "f"), 125'000'000'000);
}

TEST(ParseBandwidth, BadInputNamesFieldValueAndExpectation) {
  const std::string expected_like = R"(like "100GB/s", "400Gb/s" or "25GiB/s")";
  EXPECT_EQ(bandwidth_error("100 parsecs"),
            R"(link.bandwidth: "100 parsecs" is not a bandwidth, expected a number with a unit )" +
                expected_like);
  EXPECT_EQ(bandwidth_error("100GB"),
            R"(link.bandwidth: "100GB" is not a bandwidth, expected a number with a unit )" +
                expected_like);
  EXPECT_EQ(
      bandwidth_error("0GB/s"),
      R"(link.bandwidth: "0GB/s" is not positive, expected a bandwidth > 0 )" + expected_like);
  EXPECT_EQ(
      bandwidth_error("-5GB/s"),
      R"(link.bandwidth: "-5GB/s" is not positive, expected a bandwidth > 0 )" + expected_like);
  EXPECT_EQ(bandwidth_error("1b/s"),
            R"(link.bandwidth: "1b/s" is not a whole number of bytes/s, expected a bandwidth )" +
                expected_like);
}

TEST(ParseDuration, Picoseconds) {
  EXPECT_EQ(parse_duration_ps("1.5us", "f"), 1'500'000);
  EXPECT_EQ(parse_duration_ps("1us", "f"), 1'000'000);
  EXPECT_EQ(parse_duration_ps("0.7 us", "f"), 700'000);
  EXPECT_EQ(parse_duration_ps("1.5\u00b5s", "f"), 1'500'000);  // micro sign
  EXPECT_EQ(parse_duration_ps("1.5\u03bcs", "f"), 1'500'000);  // Greek mu
  EXPECT_EQ(parse_duration_ps("500ns", "f"), 500'000);
  EXPECT_EQ(parse_duration_ps("2ms", "f"), 2'000'000'000);
  EXPECT_EQ(parse_duration_ps("1s", "f"), 1'000'000'000'000);
  EXPECT_EQ(parse_duration_ps("10ps", "f"), 10);
  EXPECT_EQ(parse_duration_ps("0us", "f"), 0);
  EXPECT_EQ(parse_duration_ps("1e-12s", "f"), 1);
}

TEST(ParseDuration, BadInputNamesFieldValueAndExpectation) {
  const std::string expected_like = R"(like "1.5us", "500ns" or "2ms")";
  EXPECT_EQ(duration_error("1500"),
            R"(link.latency: "1500" has no unit, expected a duration )" + expected_like);
  EXPECT_EQ(duration_error("0.0001ps"),
            R"(link.latency: "0.0001ps" is not a whole number of ps, expected a duration )" +
                expected_like);
  EXPECT_EQ(duration_error("-1us"),
            R"(link.latency: "-1us" is negative, expected a duration >= 0 )" + expected_like);
  EXPECT_EQ(duration_error("1 fortnight"),
            R"(link.latency: "1 fortnight" is not a duration, expected a number with a unit )" +
                expected_like);
  EXPECT_EQ(
      duration_error("1 US"),
      R"(link.latency: "1 US" is not a duration, expected a number with a unit )" + expected_like);
}

TEST(ParseFlops, PrefixesArePowersOf1000) {
  EXPECT_EQ(parse_flops("989TFLOP/s", "f"), 989e12);
  EXPECT_EQ(parse_flops("989 TFLOPS", "f"), 989e12);
  EXPECT_EQ(parse_flops("1.5e15", "f"), 1.5e15);
  EXPECT_EQ(parse_flops("2PFLOP/s", "f"), 2e15);
  EXPECT_EQ(parse_flops("1EFLOP/s", "f"), 1e18);  // the E is a prefix, not an exponent
  EXPECT_EQ(parse_flops("312 GFLOPS", "f"), 312e9);
  EXPECT_EQ(parse_flops("5kFLOP/s", "f"), 5e3);
  EXPECT_EQ(parse_flops("0.1", "f"), 0.1);
}

TEST(ParseFlops, BadInputNamesFieldValueAndExpectation) {
  const std::string expected_like = R"(like "989TFLOP/s", "989 TFLOPS" or "1.5e15")";
  EXPECT_EQ(flops_error("0TFLOP/s"),
            R"(compute.peak_flops: "0TFLOP/s" is not positive, expected a compute rate > 0 )" +
                expected_like);
  EXPECT_EQ(flops_error("989 TFLOP"),
            R"(compute.peak_flops: "989 TFLOP" is not a compute rate, expected a number with a )"
            R"(unit )" +
                expected_like);
  EXPECT_EQ(flops_error("1e999"), R"(compute.peak_flops: "1e999" is too large, expected at most )"
                                  R"(1.7976931348623157e308 FLOP/s)");
}

// Found by the units fuzzer: "-0" reached the exact scaling as a negative number, which is an
// internal error there; it is zero.
TEST(ParseQuantities, MinusZeroIsZero) {
  EXPECT_EQ(parse_bytes("-0", "size"), 0);
  EXPECT_EQ(parse_bytes("-0.0KiB", "size"), 0);
  EXPECT_EQ(parse_duration_ps("-0us", "latency"), 0);
  EXPECT_THROW(parse_bandwidth_bytes_per_s("-0", "bandwidth"), Error);
  EXPECT_THROW(parse_flops("-0", "peak_flops"), Error);
}

TEST(FormatBytes, BinaryUnitsWithAtMostThreeDecimals) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(123), "123 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(80 * kGiB), "80 GiB");
  EXPECT_EQ(format_bytes(3 * kMiB / 2), "1.5 MiB");
  EXPECT_EQ(format_bytes(1025), "1.001 KiB");         // 1.0009765625, rounded
  EXPECT_EQ(format_bytes(kMiB - 1), "1023.999 KiB");  // 1023.9990234375
  EXPECT_EQ(format_bytes(kGiB - 1), "1 GiB");  // 1023.9999990463 MiB rounds up into the next unit
  EXPECT_EQ(format_bytes(-2048), "-2 KiB");
  EXPECT_EQ(format_bytes(std::numeric_limits<std::int64_t>::max()), "8 EiB");
}

TEST(FormatDuration, DecimalUnitsWithAtMostThreeDecimals) {
  EXPECT_EQ(format_duration_ps(0), "0 ps");
  EXPECT_EQ(format_duration_ps(10), "10 ps");
  EXPECT_EQ(format_duration_ps(1'500'000), "1.5 us");
  EXPECT_EQ(format_duration_ps(2'250'000'000), "2.25 ms");
  EXPECT_EQ(format_duration_ps(1'234'567), "1.235 us");
  EXPECT_EQ(format_duration_ps(999'999), "999.999 ns");
  EXPECT_EQ(format_duration_ps(999'999'600), "1 ms");  // 999.9996 us rounds up into ms
  EXPECT_EQ(format_duration_ps(3'600'000'000'000'000), "3600 s");
}

TEST(ExactText, ShortestExactUnit) {
  EXPECT_EQ(exact_bytes_text(80 * kGiB), "80GiB");
  EXPECT_EQ(exact_bytes_text(16'000'000'000), "16GB");
  EXPECT_EQ(exact_bytes_text(1536), "1536B");  // shorter than "1.5KiB"
  EXPECT_EQ(exact_bytes_text(3 * kGiB / 2), "1.5GiB");
  EXPECT_EQ(exact_bytes_text(1'100'000'000), "1.1GB");
  EXPECT_EQ(exact_bytes_text(123), "123B");
  EXPECT_EQ(exact_bytes_text(0), "0B");
  EXPECT_EQ(exact_bandwidth_text(3'350'000'000'000), "3.35TB/s");
  EXPECT_EQ(exact_bandwidth_text(50'000'000'000), "50GB/s");
  EXPECT_EQ(exact_duration_text(1'500'000), "1.5us");
  EXPECT_EQ(exact_duration_text(10), "10ps");
  EXPECT_EQ(exact_duration_text(0), "0ps");
  EXPECT_EQ(exact_duration_text(1'234'567), "1234567ps");
  EXPECT_EQ(exact_flops_text(989e12), "989TFLOP/s");
  EXPECT_EQ(exact_flops_text(1e15), "1PFLOP/s");
  EXPECT_EQ(exact_flops_text(1.5e3), "1.5kFLOP/s");
  EXPECT_EQ(exact_flops_text(5), "5FLOP/s");
}

RC_GTEST_PROP(ExactText, BytesReadBackAsTheSameValue, ()) {
  const std::int64_t bytes =
      *rc::gen::inRange<std::int64_t>(0, std::numeric_limits<std::int64_t>::max());
  RC_ASSERT(parse_bytes(exact_bytes_text(bytes), "f") == bytes);
}

RC_GTEST_PROP(ExactText, BinaryMultiplesReadBackAsTheSameValue, ()) {
  const std::int64_t bytes =
      *rc::gen::inRange<std::int64_t>(0, 1 << 20) * (std::int64_t{1} << *rc::gen::inRange(0, 40));
  RC_ASSERT(parse_bytes(exact_bytes_text(bytes), "f") == bytes);
}

RC_GTEST_PROP(ExactText, DecimalMultiplesReadBackAsTheSameValue, ()) {
  std::int64_t value = *rc::gen::inRange<std::int64_t>(0, 1'000'000);
  for (int k = *rc::gen::inRange(0, 12); k > 0; --k) value *= 10;
  RC_ASSERT(parse_bytes(exact_bytes_text(value), "f") == value);
  RC_ASSERT(parse_duration_ps(exact_duration_text(value), "f") == value);
}

RC_GTEST_PROP(ExactText, BandwidthsReadBackAsTheSameValue, ()) {
  const std::int64_t bytes_per_s =
      *rc::gen::inRange<std::int64_t>(1, std::numeric_limits<std::int64_t>::max());
  RC_ASSERT(parse_bandwidth_bytes_per_s(exact_bandwidth_text(bytes_per_s), "f") == bytes_per_s);
}

RC_GTEST_PROP(ExactText, DurationsReadBackAsTheSameValue, ()) {
  const std::int64_t ps =
      *rc::gen::inRange<std::int64_t>(0, std::numeric_limits<std::int64_t>::max());
  RC_ASSERT(parse_duration_ps(exact_duration_text(ps), "f") == ps);
}

RC_GTEST_PROP(ExactText, FlopsReadBackAsTheSameDouble, ()) {
  const double flops =
      std::ldexp(1.0 + *rc::gen::inRange(0, 1 << 30) / double{1 << 30}, *rc::gen::inRange(-40, 80));
  RC_ASSERT(parse_flops(exact_flops_text(flops), "f") == flops);
}

}  // namespace
}  // namespace spmd
