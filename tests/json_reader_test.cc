// support/json_reader: every error is one line naming the value's JSON path, the value and what
// was expected, in one of four forms; integers are range-checked into their C++ type.

#include "support/json_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "error_of.h"

namespace spmd {
namespace {

using nlohmann::json;
using test_errors::error_of;

TEST(JsonReader, WrongValueNamesThePathTheValueAndWhatWasExpected) {
  const json document = json::parse(R"({"topology": {"dims": [4, 0]}})");
  const JsonValue dims =
      JsonValue(document, "machine").required("topology", "an object").required("dims", "sizes");
  EXPECT_EQ(error_of([&] { dims.elements("sizes")[1].positive_int32(); }),
            "topology.dims[1]: 0, expected a positive integer");
}

TEST(JsonReader, WrongTypeSaysWhichTypeItIs) {
  const json document = json::parse(R"({"devices": "8"})");
  const JsonValue root(document, "machine");
  EXPECT_EQ(error_of([&] { root.required("devices", "a count").positive_int32(); }),
            "devices: \"8\" is a string, expected a positive integer");
  EXPECT_EQ(error_of([&] { root.string(); }),
            "machine: {\"devices\":\"8\"} is an object, expected a string");
}

TEST(JsonReader, UnknownFieldListsTheKnownOnes) {
  const json document = json::parse(R"({"link": {"bandwidth": 1, "bandwith": 2}})");
  const JsonValue link = JsonValue(document, "machine").required("link", "an object");
  EXPECT_EQ(error_of([&] {
              link.require_object({"bandwidth", "latency"});
            }),
            "link.bandwith: unknown field, expected one of bandwidth, latency");
  EXPECT_NO_THROW(link.require_object({"bandwidth", "bandwith", "latency"}));
}

TEST(JsonReader, MissingFieldSaysWhatWasExpected) {
  const json document = json::parse(R"({"mesh": {}})");
  const JsonValue mesh = JsonValue(document, "case").required("mesh", "an object");
  EXPECT_EQ(error_of([&] { mesh.required("shape", "an array of sizes"); }),
            "mesh.shape: missing, expected an array of sizes");
  EXPECT_FALSE(mesh.has("shape"));
  EXPECT_FALSE(mesh.optional("shape").has_value());
}

TEST(JsonReader, IntegersAreRangeCheckedIntoTheirType) {
  // 4294967297 is 2^32 + 1: read through a plain int it would become 1.
  const json document = json::parse(R"({"format": 4294967297, "shape": [4294967300],
                                        "big": 18446744073709551615, "low": -5, "half": 1.5})");
  const JsonValue root(document, "case");
  EXPECT_EQ(error_of([&] { root.required("format", "1").int32(); }),
            "format: 4294967297, expected an integer");
  EXPECT_EQ(error_of([&] { root.required("shape", "").elements("")[0].positive_int32(); }),
            "shape[0]: 4294967300, expected a positive integer up to 2147483647");
  EXPECT_EQ(error_of([&] { root.required("big", "").integer(); }),
            "big: 18446744073709551615, expected an integer");
  EXPECT_EQ(error_of([&] { root.required("low", "").integer(0, 10, "0 to 10"); }),
            "low: -5, expected 0 to 10");
  EXPECT_EQ(error_of([&] { root.required("half", "").int32(); }), "half: 1.5, expected an integer");
  EXPECT_EQ(root.required("low", "").integer(), -5);
  EXPECT_EQ(JsonValue(json::parse("2147483647"), "n").int32(), std::numeric_limits<int>::max());
}

TEST(JsonReader, AtPathNamesFieldsUnderThePath) {
  const json document = json::parse(R"({"layers": [4, -1]})");
  const JsonValue workload = JsonValue::at_path(document, "workload");
  EXPECT_EQ(workload.path(), "workload");
  EXPECT_EQ(error_of([&] { workload.required("layers", "").elements("")[1].positive_int32(); }),
            "workload.layers[1]: -1, expected a positive integer");
  EXPECT_EQ(error_of([&] { workload.required("kind", "a kind"); }),
            "workload.kind: missing, expected a kind");
}

class JsonFile : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    const std::filesystem::path path = std::filesystem::temp_directory_path() / name;
    std::ofstream(path) << text;
    return path.string();
  }
};

TEST_F(JsonFile, NumberBeyondDoublesRangeIsAnErrorNamingTheFile) {
  const std::string path = write("spmd_json_reader_1e400.json", R"({"bytes": 1e400})");
  const std::string message = error_of([&] { parse_json_file(path); });
  EXPECT_EQ(message.rfind(path + ": not valid JSON (", 0), 0u) << message;
}

TEST_F(JsonFile, SyntaxErrorAndMissingFileNameTheFile) {
  const std::string path = write("spmd_json_reader_syntax.json", "{ not json");
  EXPECT_EQ(error_of([&] { parse_json_file(path); }).rfind(path + ": not valid JSON (", 0), 0u);
  EXPECT_EQ(error_of([&] { parse_json_file("/nonexistent/x.json"); }),
            "/nonexistent/x.json: cannot read this file (no such file)");
}

}  // namespace
}  // namespace spmd
