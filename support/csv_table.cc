#include "support/csv_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "reference/check.h"
#include "reference/error.h"
#include "reference/input_file.h"

namespace spmd {
namespace {

// Walks the text one record at a time, counting lines (a line break inside quotes counts too,
// so every record knows the line it starts on).
class CsvScanner {
 public:
  CsvScanner(std::string_view text, const std::string& file_name)
      : text_(text), file_name_(file_name) {
    constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
    if (text_.starts_with(kByteOrderMark)) position_ = kByteOrderMark.size();
  }

  bool done() const { return position_ >= text_.size(); }

  CsvRecord next_record() {
    CsvRecord record{line_, {}};
    for (;;) {
      record.fields.push_back(next_field(record.line, record.fields.size() + 1));
      if (at(',')) {
        ++position_;
        continue;
      }
      end_of_line();
      return record;
    }
  }

 private:
  bool at(char c) const { return position_ < text_.size() && text_[position_] == c; }
  bool at_line_end() const {
    return at('\n') || (at('\r') && position_ + 1 < text_.size() && text_[position_ + 1] == '\n');
  }

  void end_of_line() {
    if (at('\r')) ++position_;
    if (at('\n')) ++position_;
    ++line_;
  }

  [[noreturn]] void fail(int line, std::size_t field_number, std::string_view problem) const {
    throw Error(fmt::format("{}:{}: field {} {}", file_name_, line, field_number, problem));
  }

  std::string next_field(int record_line, std::size_t field_number) {
    return at('"') ? quoted_field(field_number) : plain_field(record_line, field_number);
  }

  std::string plain_field(int record_line, std::size_t field_number) {
    std::string field;
    while (!done() && !at(',') && !at_line_end()) {
      if (at('"')) {
        fail(record_line, field_number,
             "has a quote inside an unquoted field, expected the whole field in quotes with \"\" "
             "for each quote in it");
      }
      field += text_[position_++];
    }
    return field;
  }

  std::string quoted_field(std::size_t field_number) {
    const int opening_line = line_;
    ++position_;  // the opening quote
    std::string field;
    for (;;) {
      if (done()) {
        fail(opening_line, field_number,
             "opens a quote that the file never closes, expected a closing \"");
      }
      const char c = text_[position_++];
      if (c == '"') {
        if (!at('"')) break;
        ++position_;  // "" is one quote
      } else if (c == '\n') {
        ++line_;
      }
      field += c;
    }
    if (!done() && !at(',') && !at_line_end()) {
      fail(line_, field_number,
           "has text after its closing quote, expected a comma or the end of the line");
    }
    return field;
  }

  std::string_view text_;
  const std::string& file_name_;
  std::size_t position_ = 0;
  int line_ = 1;
};

bool is_blank_line(const CsvRecord& record) {
  return record.fields.size() == 1 && record.fields[0].empty();
}

}  // namespace

CsvTable CsvTable::parse(std::string_view text, std::string file_name) {
  CsvTable table;
  table.file_name_ = std::move(file_name);
  CsvScanner scanner(text, table.file_name_);
  bool has_header = false;
  while (!scanner.done()) {
    CsvRecord record = scanner.next_record();
    if (is_blank_line(record)) continue;
    if (!has_header) {
      std::set<std::string> seen;
      for (std::size_t i = 0; i < record.fields.size(); ++i) {
        const std::string& name = record.fields[i];
        if (name.empty() || !seen.insert(name).second) {
          throw Error(
              fmt::format("{}:{}: column {} is named '{}', expected a name of its own "
                          "(not empty, not a name twice)",
                          table.file_name_, record.line, i + 1, name));
        }
      }
      table.columns_ = std::move(record.fields);
      has_header = true;
      continue;
    }
    if (record.fields.size() != table.columns_.size()) {
      throw Error(fmt::format("{}:{}: {} fields, expected {} (one per column of the header)",
                              table.file_name_, record.line, record.fields.size(),
                              table.columns_.size()));
    }
    table.records_.push_back(std::move(record));
  }
  if (!has_header) {
    throw Error(
        fmt::format("{}: no header, expected a first line naming the columns", table.file_name_));
  }
  return table;
}

CsvTable CsvTable::read_file(const std::string& path) {
  return parse(read_input_file(path, "the CSV file"), path_for_message(path));
}

std::optional<std::size_t> CsvTable::column_index(std::string_view name) const {
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i] == name) return i;
  }
  return std::nullopt;
}

void CsvTable::require_columns(std::initializer_list<std::string_view> names,
                               std::string_view expected) const {
  std::vector<std::string_view> missing;
  for (std::string_view name : names) {
    if (!column_index(name)) missing.push_back(name);
  }
  if (!missing.empty()) {
    throw Error(fmt::format("{}: missing column{} {}; expected {}", file_name_,
                            missing.size() == 1 ? "" : "s", fmt::join(missing, ", "), expected));
  }
}

const std::string& CsvTable::field(const CsvRecord& record, std::string_view column) const {
  const std::optional<std::size_t> index = column_index(column);
  SPMD_CHECK(index.has_value(), fmt::format("{}: no column {}", file_name_, column));
  return record.fields.at(*index);
}

std::string CsvTable::where(const CsvRecord& record) const {
  return fmt::format("{}:{}", file_name_, record.line);
}

}  // namespace spmd
