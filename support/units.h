#pragma once
// Quantities with units, as people write them in machine files: sizes ("80GiB", "16GB"),
// bandwidths ("450GB/s", "400Gb/s"), durations ("1.5us") and compute rates ("989TFLOP/s").
//
// Sizes, bandwidths and durations are parsed as exact decimals and scaled in integers, so
// "1.1GB" is exactly 1'100'000'000 bytes and "0.7us" exactly 700'000 ps; a value that is not a
// whole number of bytes (or bytes/s, or ps) is an error rather than silently rounded. Decimal
// prefixes (kB, MB, GB, TB; kB and KB both mean 1000) are powers of 1000, binary ones (KiB, MiB,
// GiB, TiB) powers of 1024. Every parse error is an spmd::Error of one line that starts with
// `field` (the value's JSON path), quotes the text and says what was expected.

#include <cstdint>
#include <string>
#include <string_view>

namespace spmd {

// "80GiB", "80 GiB", "16GB", "1kB", "123" (plain bytes), "1.5GiB". Result >= 0.
std::int64_t parse_bytes(std::string_view text, std::string_view field);

// "100GB/s", "25GiB/s", "400Gb/s" or "400Gbit/s" (bits: divided by 8), "1e9" (plain bytes/s).
// Result > 0.
std::int64_t parse_bandwidth_bytes_per_s(std::string_view text, std::string_view field);

// "1.5us", "0.7 us", "1.5µs", "500ns", "2ms", "1s", "10ps". A unit is required. Result >= 0.
std::int64_t parse_duration_ps(std::string_view text, std::string_view field);

// "989TFLOP/s", "989 TFLOPS", "1.5e15" (plain FLOP/s); prefixes k M G T P E. Result > 0; the
// double nearest to the exact decimal value.
double parse_flops(std::string_view text, std::string_view field);

// For reports, rounded to at most 3 decimals: "80 GiB", "1.5 MiB", "123 B" (binary units);
// "1.5 us", "2.25 ms", "10 ps".
std::string format_bytes(std::int64_t bytes);
std::string format_duration_ps(std::int64_t ps);

// For files: the shortest text that the parser above reads back as exactly the same value
// ("80GiB", "16GB", "3.35TB/s", "1.5us", "989TFLOP/s").
std::string exact_bytes_text(std::int64_t bytes);
std::string exact_bandwidth_text(std::int64_t bytes_per_s);
std::string exact_duration_text(std::int64_t ps);
std::string exact_flops_text(double flops);

}  // namespace spmd
