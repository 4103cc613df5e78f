#pragma once
// Reading CSV files as RFC 4180 writes them: records end with LF or CRLF, fields are separated
// by commas, and a field in double quotes may hold commas, line breaks and quotes written twice
// ("" for one "). The first record names the columns; every other record has one field per
// column. Blank lines are skipped, a UTF-8 byte order mark at the start is ignored, and fields
// are kept exactly as written (no trimming).
//
// Every error is one spmd::Error naming the file and the line where the record starts, e.g.
//   measurements.csv:17: field 3 has a quote inside an unquoted field, expected ...
//   measurements.csv: missing columns time_us, nic; expected the columns of ...
// (Debian's CSV libraries were weighed: libcsv is a C callback API last released in 2013 and
// libfccp reads line by line, without line breaks inside quotes; this reader is short.)

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spmd {

struct CsvRecord {
  int line = 0;  // the line of the file where the record starts, from 1
  std::vector<std::string> fields;
};

class CsvTable {
 public:
  // `file_name` names the text in errors.
  static CsvTable parse(std::string_view text, std::string file_name);
  // The file's text (reference/input_file.h: every way the path can be wrong is an spmd::Error).
  static CsvTable read_file(const std::string& path);

  const std::string& file_name() const { return file_name_; }
  const std::vector<std::string>& columns() const { return columns_; }
  const std::vector<CsvRecord>& records() const { return records_; }  // the header not among them

  std::optional<std::size_t> column_index(std::string_view name) const;
  // spmd::Error "FILE: missing columns a, b; expected <expected>" when any of `names` is absent.
  void require_columns(std::initializer_list<std::string_view> names,
                       std::string_view expected) const;
  // The record's field in `column`, which must be a column of the table (an internal error
  // otherwise: require_columns first).
  const std::string& field(const CsvRecord& record, std::string_view column) const;
  // "FILE:LINE", to start a message about a record.
  std::string where(const CsvRecord& record) const;

 private:
  std::string file_name_;
  std::vector<std::string> columns_;
  std::vector<CsvRecord> records_;
};

}  // namespace spmd
