#include "support/json_reader.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <set>
#include <utility>

#include "reference/error.h"
#include "reference/input_file.h"
#include "support/name_lists.h"

namespace spmd {

using nlohmann::json;

namespace {

// Rejects, while parsing, a key that appears twice in one object (nlohmann keeps the last one
// silently) and nesting deeper than kMaxJsonDepth (so no later recursion over the document, such
// as formatting it for an error, can overflow the stack).
class StrictJsonChecks {
 public:
  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxJsonDepth) {
      throw Error(fmt::format("nested deeper than {} levels, expected at most that", kMaxJsonDepth));
    }
    switch (event) {
      case json::parse_event_t::object_start: keys_.emplace_back(); break;
      case json::parse_event_t::object_end: keys_.pop_back(); break;
      case json::parse_event_t::key: {
        const std::string& key = parsed.get_ref<const std::string&>();
        if (!keys_.back().insert(key).second) {
          throw Error(fmt::format("key {} appears twice in one object, expected unique keys",
                                  shortened_text(json(key).dump())));
        }
        break;
      }
      default: break;
    }
    return true;
  }

 private:
  std::vector<std::set<std::string, std::less<>>> keys_;  // one per object being parsed
};

}  // namespace

std::string shortened_text(std::string_view text) {
  if (text.size() <= kMaxShownChars) return std::string(text);
  return fmt::format("{}... ({} characters)", text.substr(0, kMaxShownChars), text.size());
}

nlohmann::json parse_json_file(const std::string& file, std::string_view what) {
  const std::string text = read_input_file(file, what);
  try {
    return json::parse(text, StrictJsonChecks());
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e400
    throw Error(fmt::format("{}: not valid JSON ({})", path_for_message(file), e.what()));
  } catch (const Error& e) {
    throw Error(fmt::format("{}: not valid JSON ({})", path_for_message(file), e.what()));
  }
}

namespace {

std::string with_article(const json& value) {
  switch (value.type()) {
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::null: return "null";
    default: return "a number";
  }
}

}  // namespace

JsonValue::JsonValue(const nlohmann::json& document, std::string root_name)
    : JsonValue(document, "", std::move(root_name)) {}

JsonValue::JsonValue(const nlohmann::json& value, std::string path, std::string root_name)
    : value_(&value), path_(std::move(path)), root_name_(std::move(root_name)) {}

JsonValue JsonValue::at_path(const nlohmann::json& document, std::string path) {
  std::string root_name = path;
  return JsonValue(document, std::move(path), std::move(root_name));
}

std::string JsonValue::path() const { return path_.empty() ? root_name_ : path_; }

JsonValue JsonValue::child(std::string_view key, const nlohmann::json& value) const {
  return JsonValue(value, path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key),
                   root_name_);
}

std::string JsonValue::shown() const { return shortened_text(value_->dump()); }

void JsonValue::fail(std::string_view message) const {
  throw Error(fmt::format("{}: {}", path(), message));
}

void JsonValue::fail_value(std::string_view expected) const {
  fail(fmt::format("{}, expected {}", shown(), expected));
}

void JsonValue::fail_type(std::string_view expected) const {
  fail(fmt::format("{} is {}, expected {}", shown(), with_article(*value_), expected));
}

const JsonValue& JsonValue::require_object(std::initializer_list<std::string_view> known) const {
  if (!value_->is_object()) fail_type(fmt::format("an object with fields {}", comma_list(known)));
  for (const auto& [key, unused] : value_->items()) {
    bool is_known = false;
    for (std::string_view name : known) is_known = is_known || key == name;
    if (!is_known) {
      child(shortened_text(key), unused)
          .fail(fmt::format("unknown field, expected one of {}", comma_list(known)));
    }
  }
  return *this;
}

std::optional<JsonValue> JsonValue::optional(std::string_view key) const {
  if (!value_->is_object()) fail_type("an object");
  const auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return child(key, *it);
}

bool JsonValue::has(std::string_view key) const { return optional(key).has_value(); }

JsonValue JsonValue::required(std::string_view key, std::string_view expected) const {
  std::optional<JsonValue> value = optional(key);
  if (!value) child(key, *value_).fail(fmt::format("missing, expected {}", expected));
  return *value;
}

std::vector<JsonValue> JsonValue::elements(std::string_view expected) const {
  if (!value_->is_array()) fail_type(expected);
  std::vector<JsonValue> out;
  out.reserve(value_->size());
  for (std::size_t k = 0; k < value_->size(); ++k) {
    out.push_back(JsonValue((*value_)[k], fmt::format("{}[{}]", path(), k), root_name_));
  }
  return out;
}

std::vector<int> JsonValue::int32_list(std::string_view expected,
                                       std::string_view expected_element) const {
  std::vector<int> list;
  for (const JsonValue& element : elements(expected)) {
    list.push_back(element.int32(std::numeric_limits<int>::min(), std::numeric_limits<int>::max(),
                                 expected_element));
  }
  return list;
}

std::string JsonValue::string(std::string_view expected) const {
  if (!value_->is_string()) fail_type(expected);
  return value_->get<std::string>();
}

bool JsonValue::is_null() const { return value_->is_null(); }
bool JsonValue::is_string() const { return value_->is_string(); }
bool JsonValue::is_number() const { return value_->is_number(); }
std::string JsonValue::number_text() const { return value_->dump(); }

bool JsonValue::boolean() const {
  if (!value_->is_boolean()) fail_type("true or false");
  return value_->get<bool>();
}

std::int64_t JsonValue::integer(std::int64_t min, std::int64_t max,
                                std::string_view expected) const {
  if (!value_->is_number()) fail_type(expected);
  if (!value_->is_number_integer()) fail_value(expected);
  // nlohmann holds an integer >= 0 as unsigned when parsed: compare without narrowing.
  if (value_->is_number_unsigned()) {
    const std::uint64_t value = value_->get<std::uint64_t>();
    if (max < 0 || value > static_cast<std::uint64_t>(max) ||
        (min > 0 && value < static_cast<std::uint64_t>(min))) {
      fail_value(expected);
    }
    return static_cast<std::int64_t>(value);
  }
  const std::int64_t value = value_->get<std::int64_t>();
  if (value < min || value > max) fail_value(expected);
  return value;
}

int JsonValue::int32(int min, int max, std::string_view expected) const {
  return static_cast<int>(integer(min, max, expected));
}

int JsonValue::positive_int32() const {
  constexpr std::string_view kExpected = "a positive integer";
  if (!is_number()) fail_type(kExpected);
  if (!value_->is_number_integer()) fail_value(kExpected);
  const bool positive = value_->is_number_unsigned() ? value_->get<std::uint64_t>() > 0
                                                     : value_->get<std::int64_t>() > 0;
  if (!positive) fail_value(kExpected);
  return int32(1, std::numeric_limits<int>::max(), "a positive integer up to 2147483647");
}

}  // namespace spmd
