// support/csv_table: RFC 4180 as written (quoted fields with commas, line breaks and doubled
// quotes; LF or CRLF), each record knowing the line it starts on, and one-line errors naming the
// file and the line.

#include "support/csv_table.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "error_of.h"

namespace spmd {
namespace {

using test_errors::error_of;

std::vector<std::string> fields_of(const CsvTable& table, std::size_t record) {
  return table.records().at(record).fields;
}

TEST(CsvTable, QuotedFieldsKeepCommasLineBreaksAndDoubledQuotes) {
  // RFC 4180 section 2, rules 5-7: commas, line breaks and "" inside double quotes.
  const CsvTable table = CsvTable::parse(
      "name,text,n\n"
      "a,\"one, two\",1\n"
      "b,\"say \"\"hi\"\"\",2\n"
      "c,\"two\nlines\",3\n"
      "d,\"\",4\n",
      "t.csv");
  EXPECT_EQ(table.columns(), (std::vector<std::string>{"name", "text", "n"}));
  ASSERT_EQ(table.records().size(), 4u);
  EXPECT_EQ(fields_of(table, 0), (std::vector<std::string>{"a", "one, two", "1"}));
  EXPECT_EQ(fields_of(table, 1), (std::vector<std::string>{"b", "say \"hi\"", "2"}));
  EXPECT_EQ(fields_of(table, 2), (std::vector<std::string>{"c", "two\nlines", "3"}));
  EXPECT_EQ(fields_of(table, 3), (std::vector<std::string>{"d", "", "4"}));
}

TEST(CsvTable, RecordsKnowTheLineTheyStartOnPastLineBreaksInQuotes) {
  const CsvTable table = CsvTable::parse("a,b\n1,\"x\ny\nz\"\n\n2,w\n", "t.csv");
  ASSERT_EQ(table.records().size(), 2u);
  EXPECT_EQ(table.records()[0].line, 2);
  EXPECT_EQ(table.records()[1].line, 6);  // after the 3-line record and a blank line
  EXPECT_EQ(table.where(table.records()[1]), "t.csv:6");
}

TEST(CsvTable, CrlfLineEndsAByteOrderMarkAndNoFinalLineBreakAreRead) {
  const CsvTable table = CsvTable::parse(
      "\xEF\xBB\xBF"
      "a,b\r\n1,\"2\"\r\n3,4",
      "t.csv");
  EXPECT_EQ(table.columns(), (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(table.records().size(), 2u);
  EXPECT_EQ(fields_of(table, 0), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(fields_of(table, 1), (std::vector<std::string>{"3", "4"}));
}

TEST(CsvTable, EmptyFieldsAndSpacesAreKeptAsWritten) {
  const CsvTable table = CsvTable::parse("a,b,c\n, x ,\n", "t.csv");
  EXPECT_EQ(fields_of(table, 0), (std::vector<std::string>{"", " x ", ""}));
}

TEST(CsvTable, FieldsAreFoundByColumnName) {
  const CsvTable table = CsvTable::parse("a,b\n1,2\n", "t.csv");
  EXPECT_EQ(table.field(table.records()[0], "b"), "2");
  EXPECT_EQ(table.column_index("a"), 0u);
  EXPECT_EQ(table.column_index("c"), std::nullopt);
}

TEST(CsvTable, MalformedQuotesNameTheFileLineAndField) {
  EXPECT_EQ(error_of([] { CsvTable::parse("a,b\n1,x\"y\n", "t.csv"); }),
            "t.csv:2: field 2 has a quote inside an unquoted field, expected the whole field in "
            "quotes with \"\" for each quote in it");
  EXPECT_EQ(error_of([] { CsvTable::parse("a,b\n1,\"x\"y\n", "t.csv"); }),
            "t.csv:2: field 2 has text after its closing quote, expected a comma or the end of "
            "the line");
  EXPECT_EQ(error_of([] { CsvTable::parse("a,b\n1,2\n3,\"never\nclosed\n", "t.csv"); }),
            "t.csv:3: field 2 opens a quote that the file never closes, expected a closing \"");
}

TEST(CsvTable, ARecordWithTheWrongFieldCountIsAnError) {
  EXPECT_EQ(error_of([] { CsvTable::parse("a,b,c\n1,2,3\n1,2\n", "t.csv"); }),
            "t.csv:3: 2 fields, expected 3 (one per column of the header)");
  EXPECT_EQ(error_of([] { CsvTable::parse("a,b\n1,\"2,3\",4\n", "t.csv"); }),
            "t.csv:2: 3 fields, expected 2 (one per column of the header)");
}

TEST(CsvTable, TheHeaderMustNameEveryColumnOnce) {
  EXPECT_EQ(error_of([] { CsvTable::parse("", "t.csv"); }),
            "t.csv: no header, expected a first line naming the columns");
  EXPECT_EQ(error_of([] { CsvTable::parse("a,,c\n", "t.csv"); }),
            "t.csv:1: column 2 is named '', expected a name of its own (not empty, not a name "
            "twice)");
  EXPECT_EQ(error_of([] { CsvTable::parse("a,b,a\n", "t.csv"); }),
            "t.csv:1: column 3 is named 'a', expected a name of its own (not empty, not a name "
            "twice)");
}

TEST(CsvTable, MissingColumnsAreNamedTogether) {
  const CsvTable table = CsvTable::parse("a,b\n", "t.csv");
  EXPECT_NO_THROW(table.require_columns({"a", "b"}, "a and b"));
  EXPECT_EQ(error_of([&] {
              table.require_columns({"a", "x", "y"}, "a, x and y");
            }),
            "t.csv: missing columns x, y; expected a, x and y");
  EXPECT_EQ(error_of([&] { table.require_columns({"z"}, "z"); }),
            "t.csv: missing column z; expected z");
}

TEST(CsvTable, AFileThatIsNotThereIsAnErrorNamingIt) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "spmdsim_no_such_file.csv").string();
  const std::string message = error_of([&] { CsvTable::read_file(path); });
  EXPECT_NE(message.find("spmdsim_no_such_file.csv: cannot read the CSV file"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace spmd
