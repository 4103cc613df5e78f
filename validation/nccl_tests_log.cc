#include "validation/nccl_tests_log.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>

#include "reference/error.h"
#include "reference/input_file.h"

namespace spmd {
namespace {

std::vector<std::string> words_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The line without the "12: " label `srun -l` puts before each task's output.
std::string without_task_label(const std::string& line) {
  std::size_t at = line.find_first_not_of(" \t");
  if (at == std::string::npos || !std::isdigit(static_cast<unsigned char>(line[at]))) return line;
  at = line.find_first_not_of("0123456789", at);
  const bool labelled = at != std::string::npos && line[at] == ':' && at + 1 < line.size() &&
                        std::isspace(static_cast<unsigned char>(line[at + 1]));
  return labelled ? line.substr(at + 2) : line;
}

// The count in the word after `key` ("nGpus 8", "graph: 1"), or joined to it ("graph:1").
std::optional<int> count_after(const std::vector<std::string>& words, std::string_view key) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (!words[i].starts_with(key)) continue;
    const std::string_view rest = std::string_view(words[i]).substr(key.size());
    const std::string_view count = rest.empty() && i + 1 < words.size() ? words[i + 1] : rest;
    if (all_digits(count)) return std::stoi(std::string(count.substr(0, 6)));
  }
  return std::nullopt;
}

// Where in a results row the out-of-place time stands, from the column header
// ("#  size  count  type  redop  root  time  algbw  busbw  #wrong  time ..."): the first
// "time". Older nccl-tests print no root column, so the header decides.
std::optional<std::size_t> time_column(const std::vector<std::string>& header_words) {
  const auto time = std::find(header_words.begin(), header_words.end(), "time");
  if (header_words.empty() || header_words.front() != "size" || time == header_words.end()) {
    return std::nullopt;
  }
  return static_cast<std::size_t>(time - header_words.begin());
}

class LogReader {
 public:
  explicit LogReader(const std::string& name) : name_(name) {}

  void read_line(const std::string& raw, int line_number) {
    const std::string line = without_task_label(raw);
    const std::vector<std::string> words = words_of(line);
    if (words.empty()) return;
    if (words.front().starts_with("#")) {
      read_comment(words, line_number);
    } else if (words.size() > time_column_ && all_digits(words[0]) && all_digits(words[1])) {
      read_result(words, line_number);
    }
  }

  NcclTestsLog finish(std::string_view text) {
    log_.tests = tests_named_in(text);
    if (!rank_numbers_.empty()) log_.ranks = static_cast<int>(rank_numbers_.size());
    if (!hosts_.empty()) log_.hosts = static_cast<int>(hosts_.size());
    if (log_.results.empty()) {
      throw Error(fmt::format(
          "{}: no results; expected nccl-tests or rccl-tests output, rows of size, count, type, "
          "redop, root, time (us), algbw and busbw",
          name_));
    }
    return std::move(log_);
  }

 private:
  // `words` without the leading "#": the header's nGpus and graph, a rank's line
  // ("Rank 3 Group 0 Pid 1234 on HOST device 3 ..."), or the results' column header.
  void read_comment(std::vector<std::string> words, int line_number) {
    if (words.front() == "#") {
      words.erase(words.begin());
    } else {
      words.front().erase(0, 1);
    }
    if (words.empty()) return;
    if (const std::optional<int> count = count_after(words, "nGpus")) {
      log_.gpus_per_process = std::max(1, *count);
    }
    if (const std::optional<int> count = count_after(words, "graph:")) {
      log_.graph_launch = *count > 0;
    }
    if (read_rank(words)) return;
    if (const std::optional<std::size_t> column = time_column(words)) {
      if (!log_.results.empty()) {
        throw Error(fmt::format("{}:{}: a second results table; expected one test's output", name_,
                                line_number));
      }
      time_column_ = *column;
    }
  }

  bool read_rank(const std::vector<std::string>& words) {
    if (words.size() < 5 || words[0] != "Rank" || !all_digits(words[1])) return false;
    const auto on = std::find(words.begin() + 2, words.end(), "on");
    if (on == words.end() || on + 2 >= words.end() || !on[2].starts_with("device")) return false;
    rank_numbers_.insert(std::stoi(words[1].substr(0, 6)));
    hosts_.insert(on[1]);
    return true;
  }

  void read_result(const std::vector<std::string>& words, int line_number) {
    NcclTestsResult result{.line = line_number, .type = words[2]};
    const std::string& size = words[0];
    const auto [size_end, size_error] =
        std::from_chars(size.data(), size.data() + size.size(), result.size_bytes);
    const std::string& time = words[time_column_];
    const auto [time_end, time_error] =
        std::from_chars(time.data(), time.data() + time.size(), result.time_us);
    if (size_error != std::errc() || size_end != size.data() + size.size()) {
      throw Error(fmt::format("{}:{}: size '{}': expected a number of bytes", name_, line_number,
                              size.substr(0, 40)));
    }
    // nccl-tests prints a size of 0 where the count per rank rounds down to nothing (an
    // all-gather of 8 bytes on 16 ranks): it moves no data, so there is nothing to time.
    if (result.size_bytes == 0) return;
    if (time_error != std::errc() || time_end != time.data() + time.size() ||
        !std::isfinite(result.time_us) || result.time_us <= 0) {
      throw Error(fmt::format("{}:{}: time '{}': expected a positive number of microseconds", name_,
                              line_number, time.substr(0, 40)));
    }
    log_.results.push_back(result);
  }

  // nccl-tests' binaries named anywhere in the output (its command line, "Collective test
  // starting: all_reduce_perf"): a known test's name followed by "_perf", as whole words.
  static std::vector<std::string> tests_named_in(std::string_view text) {
    static constexpr std::string_view kTests[] = {
        "all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast",
        "reduce",     "sendrecv",   "gather",         "scatter",  "hypercube"};
    const auto word_char = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
    };
    std::vector<std::string> tests;
    for (std::size_t at = text.find("_perf"); at != std::string_view::npos;
         at = text.find("_perf", at + 1)) {
      const std::size_t end = at + 5;
      if (end < text.size() && word_char(text[end])) continue;
      std::size_t start = at;
      while (start > 0 && word_char(text[start - 1])) --start;
      const std::string_view name(text.data() + start, at - start);
      const bool known = std::find(std::begin(kTests), std::end(kTests), name) != std::end(kTests);
      if (known && std::find(tests.begin(), tests.end(), name) == tests.end()) {
        tests.emplace_back(name);
      }
    }
    return tests;
  }

  std::string name_;
  NcclTestsLog log_;
  std::set<int> rank_numbers_;
  std::set<std::string> hosts_;
  std::size_t time_column_ = 5;  // nccl-tests' layout since it has a root column
};

}  // namespace

NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& name) {
  LogReader reader(name);
  int line_number = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    reader.read_line(line, ++line_number);
    start = end + 1;
  }
  return reader.finish(text);
}

NcclTestsLog read_nccl_tests_log(const std::string& path) {
  return parse_nccl_tests_log(read_input_file(path, "the nccl-tests output"),
                              path_for_message(path));
}

std::optional<std::string> perf_op_of_nccl_test(std::string_view test) {
  if (test == "all_reduce" || test == "all_gather" || test == "reduce_scatter" ||
      test == "broadcast") {
    return std::string(test);
  }
  if (test == "alltoall") return "all_to_all";
  if (test == "sendrecv") return "ppermute";
  return std::nullopt;
}

namespace {
std::string tests_text(const std::vector<std::string>& tests) {
  std::vector<std::string> binaries;
  for (const std::string& test : tests) binaries.push_back(test + "_perf");
  return fmt::format("{}", fmt::join(binaries, ", "));
}
}  // namespace

std::string op_of_output(const NcclTestsLog& log, const std::string& source,
                         const std::string& op) {
  if (log.tests.size() != 1) {
    if (!op.empty()) return op;
    throw Error(fmt::format("{}: {}; expected --op to say which collective it measured", source,
                            log.tests.empty()
                                ? "the output names no test (all_reduce_perf, ...)"
                                : "the output names several tests, " + tests_text(log.tests)));
  }
  const std::optional<std::string> named = perf_op_of_nccl_test(log.tests.front());
  if (!named) {
    throw Error(
        fmt::format("{}: {}'s output; expected one of all_reduce_perf, all_gather_perf, "
                    "reduce_scatter_perf, alltoall_perf, broadcast_perf or sendrecv_perf",
                    source, tests_text(log.tests)));
  }
  if (!op.empty() && op != *named) {
    throw Error(fmt::format("--op {}: {} is {}'s output; expected --op {} or no --op", op, source,
                            tests_text(log.tests), *named));
  }
  return *named;
}

}  // namespace spmd
