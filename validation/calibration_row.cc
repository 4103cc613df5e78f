#include "validation/calibration_row.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <regex>

#include "reference/check.h"
#include "reference/error.h"
#include "support/json_reader.h"
#include "validation/nccl_type_names.h"

namespace spmd {
namespace {

using cost_model::LibraryAlgorithm;
using cost_model::Protocol;
using cost_model::TimedOp;

std::string_view trimmed(std::string_view text) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

// The text up to the first space, parenthesis, semicolon or slash ("NVLS (env)" gives "NVLS").
std::string_view first_word(std::string_view text) {
  return text.substr(0, text.find_first_of(" \t(;,/"));
}

[[noreturn]] void bad_field(std::string_view column, std::string_view text,
                            std::string_view expected) {
  throw Error(fmt::format("{} '{}': expected {}", column, shortened_text(text), expected));
}

// A whole number of at least `least` (1: a positive integer, 0: zero or more).
template <typename Integer>
Integer whole_number(std::string_view column, std::string_view text, Integer least) {
  const std::string_view digits = trimmed(text);
  Integer value = 0;
  const auto [stop, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc() || stop != digits.data() + digits.size() ||
      value < least) {
    bad_field(column, text, least == 1 ? "a positive integer" : "an integer of at least 0");
  }
  return value;
}

template <typename Integer>
Integer positive_integer(std::string_view column, std::string_view text) {
  return whole_number<Integer>(column, text, 1);
}

// A figure of a measurement: absent when empty, zero or written as not available ("n/a",
// "N/A", "-").
std::optional<double> figure(std::string_view column, std::string_view text) {
  const std::string_view number = trimmed(text);
  if (number.empty() || number == "-" || ascii_lowercase(number) == "n/a") return std::nullopt;
  double value = 0;
  const auto [stop, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (error != std::errc() || stop != number.data() + number.size() || !std::isfinite(value) ||
      value < 0) {
    bad_field(column, text, "a number of at least 0, or nothing");
  }
  if (value == 0) return std::nullopt;
  return value;
}

CalibrationRow row_of(const CsvTable& table, const CsvRecord& record) {
  const auto field = [&](std::string_view column) -> const std::string& {
    return table.field(record, column);
  };
  // A column the format has but a file may leave out reads as empty: not stated, not forced.
  static const std::string kAbsent;
  const auto field_if_present = [&](std::string_view column) -> const std::string& {
    return table.column_index(column) ? table.field(record, column) : kAbsent;
  };
  CalibrationRow row;
  row.line = record.line;
  row.config_id = field("config_id");
  if (trimmed(row.config_id).empty()) bad_field("config_id", row.config_id, "a name");
  row.machine = {field("gpu"), positive_integer<int>("gpus_total", field("gpus_total")),
                 positive_integer<int>("nodes", field("nodes")),
                 positive_integer<int>("gpus_per_node", field("gpus_per_node")),
                 field_if_present("nic")};
  if (table.column_index("interconnect")) {
    row.machine.interconnect = field("interconnect");
  }
  const MachineDescription& machine = row.machine;
  if (static_cast<std::int64_t>(machine.nodes) * machine.gpus_per_node != machine.gpus_total) {
    throw Error(fmt::format("gpus_total {}: expected nodes x gpus_per_node = {} x {}",
                            machine.gpus_total, machine.nodes, machine.gpus_per_node));
  }
  row.op_name = std::string(trimmed(field("op")));
  if (row.op_name.empty()) bad_field("op", row.op_name, "a collective such as all_reduce");
  if (const std::optional<TimedOp> op = calibration_op(field("op"))) {
    row.op = *op;
  } else {
    row.not_predicted = fmt::format("op {} is not timed", row.op_name);
  }
  row.size_bytes = whole_number<std::int64_t>("size_bytes", field("size_bytes"), 0);
  // nccl-tests prints a row of size 0 where the count per rank rounds down to nothing (an
  // all-gather of 8 bytes on 16 ranks): it moves no data, so there is nothing to predict.
  if (row.size_bytes == 0 && row.not_predicted.empty()) {
    row.not_predicted = "size_bytes 0 moves no data";
  }
  if (table.column_index("dtype")) row.element_bytes = element_bytes_of_dtype(field("dtype"));
  row.measured_time_us =
      measured_time_us(measured_figures(field_if_present("time_us"), field_if_present("algbw_GBps"),
                                        field_if_present("busbw_GBps")),
                       row.op, machine.gpus_total, row.size_bytes);
  try {
    row.forced_algorithm = forced_algorithm(field_if_present("nccl_algo"));
  } catch (const Error&) {
    // An algorithm the model does not time (NCCL's CollNetChain is timed as Direct).
    if (row.not_predicted.empty()) {
      row.not_predicted = fmt::format("nccl_algo {} is not timed",
                                      shortened_text(trimmed(field_if_present("nccl_algo"))));
    }
  }
  try {
    row.forced_protocol =
        forced_protocol(field_if_present("nccl_proto"), field_if_present("nccl_algo"));
  } catch (const Error&) {
    // A protocol the model does not time (NCCL's LL, LL128 and Simple are all it has).
    if (row.not_predicted.empty()) {
      row.not_predicted = fmt::format("nccl_proto {} is not timed",
                                      shortened_text(trimmed(field_if_present("nccl_proto"))));
    }
  }
  if (table.column_index("source")) {
    const std::string_view source = trimmed(field("source"));
    row.source = std::string(source.substr(0, source.find_first_of(" \t;,")));
  }
  if (table.column_index("notes")) row.launch = calibration_launch(field("notes"));
  if (table.column_index("nvls")) row.nvls_off = nvls_turned_off(field("nvls"));
  if (table.column_index("in_or_out_of_place")) {
    row.in_place = ascii_lowercase(trimmed(field("in_or_out_of_place"))).starts_with("in-place");
  }
  return row;
}

// Whether an nccl_algo or nccl_proto text says the run left the choice to the library: empty,
// "-", or starting with "default", "not" ("not forced", "not set"), "n/a", "none", "auto" or
// "unset".
bool forces_nothing(const std::string& lower) {
  static constexpr std::string_view kUnforced[] = {"default", "not",  "n/a",
                                                   "none",    "auto", "unset"};
  if (lower.empty() || lower == "-") return true;
  return std::any_of(std::begin(kUnforced), std::end(kUnforced),
                     [&](std::string_view word) { return lower.starts_with(word); });
}

}  // namespace

bool separate_nvlink_domains(std::string_view interconnect) {
  static const std::regex separate(
      R"((?:distinct|separate|different)\s+nvlink\s+domains|cross[-\s]?domain)");
  return std::regex_search(ascii_lowercase(interconnect), separate);
}

bool nvls_turned_off(std::string_view nvls) {
  const std::string text = ascii_lowercase(trimmed(nvls));
  const std::string_view word = first_word(text);
  return word == "off" || word == "disabled" ||
         text.find("nccl_nvls_enable=0") != std::string::npos;
}

CalibrationLaunch calibration_launch(std::string_view notes) {
  // A flag starts the text or follows a space, quote or parenthesis, so "-g" inside a path
  // ("spinup-gpu-cluster") is none.
  static const std::regex gpus(R"((?:^|[\s"'`(])(?:-g|--ngpus)[\s=]*(\d+)|nGpus\s+(\d+))");
  static const std::regex graph(
      R"((?:^|[\s"'`(])(?:-G|--cudagraph)[\s=]*(\d+)|graph:\s*([1-9]))");
  const std::string text(notes);
  CalibrationLaunch launch;
  std::smatch match;
  if (std::regex_search(text, match, gpus)) {
    const std::string number = match[1].matched ? match[1].str() : match[2].str();
    launch.gpus_per_process = std::max(1, std::stoi(number.substr(0, 6)));
  }
  if (std::regex_search(text, match, graph)) {
    launch.graph_launch = !match[1].matched || std::stoi(match[1].str().substr(0, 6)) > 0;
  }
  return launch;
}

std::vector<CalibrationRow> read_calibration_rows(const CsvTable& table) {
  const std::string expected =
      fmt::format("the calibration format's columns {}", kCalibrationColumnsText);
  table.require_columns(
      {"config_id", "gpu", "gpus_total", "nodes", "gpus_per_node", "op", "size_bytes"}, expected);
  if (!table.column_index("time_us") && !table.column_index("algbw_GBps") &&
      !table.column_index("busbw_GBps")) {
    throw Error(fmt::format("{}: missing columns time_us, algbw_GBps and busbw_GBps; expected {}",
                            table.file_name(), expected));
  }
  std::vector<CalibrationRow> rows;
  for (const CsvRecord& record : table.records()) {
    try {
      rows.push_back(row_of(table, record));
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", table.where(record), e.what()));
    }
  }
  return rows;
}

std::optional<TimedOp> calibration_op(std::string_view text) {
  std::string name = ascii_lowercase(trimmed(text));
  std::erase(name, '_');
  std::erase(name, '-');
  // nccl-tests' binaries are named after their op: all_reduce_perf.
  if (name.ends_with("perf")) name.resize(name.size() - 4);
  if (name == "allreduce") return TimedOp::all_reduce;
  if (name == "allgather") return TimedOp::all_gather;
  if (name == "reducescatter") return TimedOp::reduce_scatter;
  if (name == "broadcast" || name == "reduce") return TimedOp::broadcast;
  if (name == "alltoall") return TimedOp::all_to_all;
  if (name == "sendrecv") return TimedOp::permute;
  return std::nullopt;
}

int element_bytes_of_dtype(std::string_view text) {
  return nccl_type_bytes(trimmed(text)).value_or(4);
}

double bus_factor(TimedOp op, int ranks) {
  SPMD_CHECK(ranks >= 1, fmt::format("{} ranks", ranks));
  const double n = ranks;
  switch (op) {
    case TimedOp::all_reduce: return 2 * (n - 1) / n;
    case TimedOp::all_gather:
    case TimedOp::reduce_scatter:
    case TimedOp::all_to_all: return (n - 1) / n;
    case TimedOp::broadcast:
    case TimedOp::permute: return 1;
  }
  SPMD_UNREACHABLE("a TimedOp without a bus factor");
}

MeasuredFigures measured_figures(std::string_view time_us, std::string_view algbw_gbps,
                                 std::string_view busbw_gbps) {
  return {figure("time_us", time_us), figure("algbw_GBps", algbw_gbps),
          figure("busbw_GBps", busbw_gbps)};
}

std::optional<double> measured_time_us(const MeasuredFigures& figures, TimedOp op, int ranks,
                                       std::int64_t size_bytes) {
  // GB/s are 1e9 bytes/s, so bytes / (GB/s) is in ns; / 1e3 gives us.
  const auto time_at_algbw_us = [&](double algbw_gbps) {
    return static_cast<double>(size_bytes) / algbw_gbps / 1e3;
  };
  if (figures.time_us) return figures.time_us;
  if (figures.algbw_gbps) return time_at_algbw_us(*figures.algbw_gbps);
  const double factor = bus_factor(op, ranks);
  if (figures.busbw_gbps && factor > 0) return time_at_algbw_us(*figures.busbw_gbps / factor);
  return std::nullopt;
}

std::optional<LibraryAlgorithm> forced_algorithm(std::string_view nccl_algo) {
  const std::string text = ascii_lowercase(trimmed(nccl_algo));
  if (forces_nothing(text)) return std::nullopt;
  // "NVLS requested; what ran is not known": the source cannot say what ran (NVLS asked for
  // on hardware without it runs something else), so nothing is forced.
  if (text.find("requested") != std::string::npos) return std::nullopt;
  std::string word(first_word(text));
  // NCCL_ALGO names CollNet's two forms CollNetDirect and CollNetChain; the model times Direct.
  if (word.starts_with("collnet")) word = "collnet";
  try {
    return cost_model::library_algorithm_from_name(word);
  } catch (const Error&) {  // the column's own message, with every text it takes
    bad_field("nccl_algo", nccl_algo,
              "Ring, Tree, NVLS, NVLSTree, PAT or CollNet (optionally followed by a note such "
              "as '(env)'), 'default ...', '... requested ...' or nothing");
  }
}

std::optional<Protocol> forced_protocol(std::string_view nccl_proto, std::string_view nccl_algo) {
  const std::string text = ascii_lowercase(trimmed(nccl_proto));
  if (forces_nothing(text)) return std::nullopt;
  if (ascii_lowercase(nccl_algo).find("log shows") != std::string::npos) return std::nullopt;
  try {
    return cost_model::protocol_from_name(first_word(text));
  } catch (const Error&) {  // the column's own message, with every text it takes
    bad_field("nccl_proto", nccl_proto,
              "LL, LL128 or Simple (optionally followed by a note), 'default ...' or nothing");
  }
}

}  // namespace spmd
