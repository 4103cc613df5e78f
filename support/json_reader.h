#pragma once
// Reading JSON documents with errors people can act on: every error is one line naming the
// value's JSON path, the value and what was expected, e.g.
//   topology.dims[1]: 0, expected a positive integer
//   devices: "8" is a string, expected a positive integer
//   topology.link.bandwith: unknown field, expected one of bandwidth, latency
//   mesh.shape: missing, expected an array of sizes
// The one reader for machine files, conformance cases and workloads (spmd::Error on bad input).

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference/error.h"

namespace spmd {

// Limits that protect the stack and keep messages readable (docs/machine-format.md, "Limits"):
// nested at most 256 levels; values and keys echoed in errors are cut to 60 characters. Files
// are at most kMostInputFileBytes (support/input_file.h).
inline constexpr int kMaxJsonDepth = 256;
inline constexpr std::size_t kMaxShownChars = 60;

// The document in `file`; spmd::Error "FILE: cannot read <what> (why)" (support/input_file.h)
// or "FILE: not valid JSON (...)", also for numbers beyond double's range, a key twice in one
// object and nesting deeper than kMaxJsonDepth.
nlohmann::json parse_json_file(const std::string& file, std::string_view what = "this file");

// `text` if at most kMaxShownChars long, else its start, "..." and its length (for messages).
std::string shortened_text(std::string_view text);

// A value inside a document and its path from the root. Cheap to copy: it refers to the
// document, which must outlive it.
class JsonValue {
 public:
  // `root_name` names the whole document in errors about the root itself ("machine", "case").
  JsonValue(const nlohmann::json& document, std::string root_name);
  // A document whose fields are named under `path` in errors ("workload" gives
  // "workload.layers[1]"), for formats whose documentation names fields that way.
  static JsonValue at_path(const nlohmann::json& document, std::string path);

  const nlohmann::json& json() const { return *value_; }
  // "topology.dims[1]"; the root's name for the root.
  std::string path() const;

  // ---- Objects
  // Fails unless this is an object whose every key is in `known` (a misspelt field must not be
  // silently ignored). `expected` describes the object for the error when it is not one.
  const JsonValue& require_object(std::initializer_list<std::string_view> known) const;
  // The field, or "PATH.KEY: missing, expected EXPECTED".
  JsonValue required(std::string_view key, std::string_view expected) const;
  std::optional<JsonValue> optional(std::string_view key) const;  // absent: nullopt
  bool has(std::string_view key) const;

  // ---- Arrays
  // The elements, or a type error naming `expected` ("an array of sizes like [4, 4]").
  std::vector<JsonValue> elements(std::string_view expected) const;
  // A list of 32-bit integers; an element that is not one fails naming `expected_element`.
  std::vector<int> int32_list(std::string_view expected,
                              std::string_view expected_element = "an integer") const;

  // ---- Scalars; each fails with the path, the value and `expected` (or a default wording).
  std::string string(std::string_view expected = "a string") const;
  bool boolean() const;
  bool is_null() const;
  bool is_string() const;
  bool is_number() const;
  // An integer in [min, max]; a float, a number out of range or another type fails.
  std::int64_t integer(std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t max = std::numeric_limits<std::int64_t>::max(),
                       std::string_view expected = "an integer") const;
  int int32(int min = std::numeric_limits<int>::min(), int max = std::numeric_limits<int>::max(),
            std::string_view expected = "an integer") const;
  int positive_int32() const;  // 1..2147483647
  // A name looked up by `lookup` (dtype_from_name, ...): a string, whose lookup error becomes this
  // value's error.
  template <class Lookup>
  auto named(std::string_view expected, Lookup lookup) const -> decltype(lookup(std::string())) {
    const std::string text = string(expected);
    // No name is this long; the lookup's error would echo all of it.
    if (text.size() > kMaxShownChars) fail_value(expected);
    try {
      return lookup(text);
    } catch (const Error& e) {
      fail(e.what());
    }
  }
  // The number as the text a unit parser reads ("123", "1.5e+20"); fails unless a number.
  std::string number_text() const;

  // ---- Errors
  [[noreturn]] void fail(std::string_view message) const;         // "PATH: MESSAGE"
  [[noreturn]] void fail_value(std::string_view expected) const;  // "PATH: VALUE, expected X"
  [[noreturn]] void fail_type(std::string_view expected) const;   // "PATH: VALUE is a string, ..."
  // The value as JSON on one line, shortened if long (for messages).
  std::string shown() const;

 private:
  JsonValue(const nlohmann::json& value, std::string path, std::string root_name);
  JsonValue child(std::string_view key, const nlohmann::json& value) const;

  const nlohmann::json* value_;
  std::string path_;       // empty for the root
  std::string root_name_;  // shown for the root's path
};

}  // namespace spmd
