// `spmdsim validate` as a user runs it: a small calibration file predicted per machine, the
// summary table, the plot files, the limits that fail a CI run (exit 1), and bad input (exit 2
// with one line naming the file, the line and the field).

#include "cli/validate_command.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/csv_table.h"
#include "support/output_file.h"
#include "tests/published_calibration.h"
#include "validation/calibration_row.h"
#include "validation/collective_prediction.h"
#include "validation/collective_range.h"
#include "tests/spmdsim_binary.h"

namespace spmd {
namespace {

namespace fs = std::filesystem;

using test_calibration::published_calibration_header;

// Two machines: one H100 box (a time, an algbw-only row, a forced ring, a row with no figure)
// and two nodes of them over RoCE.
constexpr const char* kRows =
    "box,NVIDIA H100 80GB HBM3,8,1,8,NVSwitch,none,all_reduce,float,sum,1048576,"
    "30.5,,,out-of-place,default,,,,\"src, a\",\n"
    "box,NVIDIA H100 80GB HBM3,8,1,8,NVSwitch,none,all_reduce,float,sum,1073741824,"
    ",230.1,,out-of-place,default,,,,src,\n"
    "box,NVIDIA H100 80GB HBM3,8,1,8,NVSwitch,none,all_reduce,float,sum,1073741824,"
    "4700,,,out-of-place,Ring (env),,,,src,\n"
    "box,NVIDIA H100 80GB HBM3,8,1,8,NVSwitch,none,all_gather,float,none,1024,,,,"
    "out-of-place,,,,,src,no figure\n"
    "two_boxes,NVIDIA H100 80GB HBM3,16,2,8,NVSwitch,8x 400 Gb/s RoCE,all_reduce,float,sum,"
    "268435456,,,90.0,out-of-place,,,,,src,\n";

fs::path scratch_folder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("spmdsim_validate_test_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

fs::path write_csv(const fs::path& dir, const std::string& text) {
  const fs::path path = dir / "m.csv";
  write_output_file(path, text);
  return path;
}

// What `validate` prints for the published header and these rows, written in a fresh folder;
// a failed run fails the test and gives "".
std::string validated(const std::string& folder, const std::string& rows) {
  const fs::path csv = write_csv(scratch_folder(folder), published_calibration_header() + rows);
  std::ostringstream out, err;
  const int status = run_validate_command({.file = csv.string()}, out, err);
  EXPECT_EQ(status, 0) << err.str();
  return status == 0 ? out.str() : "";
}

TEST(ValidateCommand, PrintsEveryMeasuredRowPerMachineWithItsErrorAndTheSummaries) {
  const std::string text = validated("rows", kRows);
  ASSERT_FALSE(text.empty());
  EXPECT_NE(text.find("5 rows, 2 machines"), std::string::npos) << text;
  EXPECT_NE(text.find("box: NVIDIA H100 80GB HBM3, 1 node x 8 GPUs (preset hgx-h100)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("two_boxes: NVIDIA H100 80GB HBM3, 2 nodes x 8 GPUs (preset hgx-h100)"),
            std::string::npos)
      << text;
  // The forced ring runs as a ring: its line (line 4 of the file) names ring as forced and chosen.
  const std::size_t forced_line = text.find("\n       4  all_reduce");
  ASSERT_NE(forced_line, std::string::npos) << text;
  const std::string line =
      text.substr(forced_line + 1, text.find('\n', forced_line + 1) - forced_line);
  EXPECT_NE(line.find("  ring  "), std::string::npos) << line;
  EXPECT_NE(line.find("  ring/"), std::string::npos) << line;
  EXPECT_NE(text.find("3 rows compared"), std::string::npos) << text;
  EXPECT_NE(text.find("1 row compared"), std::string::npos) << text;
  EXPECT_NE(text.find("1 skipped (no time_us, algbw_GBps or busbw_GBps)"), std::string::npos);
  EXPECT_NE(text.find("all machines: 4 rows compared"), std::string::npos) << text;
  // The measured time from algbw: 1073741824 B / 230.1 GB/s.
  EXPECT_NE(text.find("4666.41"), std::string::npos) << text;
}

TEST(ValidateCommand, SummaryNamesEachMachinesSourceRepositoriesOnce) {
  const fs::path csv =
      write_csv(scratch_folder("summary_sources"),
                published_calibration_header() +
                    "box,NVIDIA H100 80GB HBM3,8,1,8,,none,all_reduce,float,sum,8,30,,,,,,,,"
                    "github:o/r@0123abc:results/a.txt; a vendor's guide,\n"
                    "box,NVIDIA H100 80GB HBM3,8,1,8,,none,all_reduce,float,sum,16,30,,,,,,,,"
                    "https://github.com/p/q/issues/7,\n"
                    "box,NVIDIA H100 80GB HBM3,8,1,8,,none,all_reduce,float,sum,32,30,,,,,,,,"
                    "github:o/r@4567def:results/b.txt,\n");
  const CommandResult result = run_binary("validate --summary '" + csv.string() + "'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find(" | o/r, p/q |\n"), std::string::npos) << result.output;
}

TEST(ValidateCommand, SummaryIsOneMarkdownTableRowPerMachineAndAll) {
  const fs::path csv = write_csv(scratch_folder("summary"), published_calibration_header() + kRows);
  const CommandResult result = run_binary("validate --summary '" + csv.string() + "'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output.rfind("| machine | preset | nodes x GPUs | rows |", 0), 0u)
      << result.output;
  EXPECT_NE(result.output.find("\n| box | hgx-h100 | 1 x 8 | 3 | "), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("\n| two_boxes | hgx-h100 | 2 x 8 | 1 | "), std::string::npos);
  EXPECT_NE(result.output.find("\n| all |  |  | 4 | "), std::string::npos);
  EXPECT_NE(result.output.find(" | src |\n"), std::string::npos) << result.output;  // source
  EXPECT_NE(result.output.find("1 row without time_us, algbw_GBps or busbw_GBps skipped."),
            std::string::npos);
  EXPECT_EQ(result.output.find(" compared: "), std::string::npos);  // no per-row listing
}

// The goals are stated per op and for one node and several apart, so both outputs break the
// rows down that way: all_reduce on one node (box's 3 rows), then across nodes (two_boxes' 1).
TEST(ValidateCommand, BreaksTheRowsDownByOpAndScale) {
  const fs::path csv = write_csv(scratch_folder("by_op"), published_calibration_header() + kRows);
  std::ostringstream out, err;
  ASSERT_EQ(run_validate_command({.file = csv.string()}, out, err), 0) << err.str();
  const std::string text = out.str();
  const std::size_t one_node =
      text.find("\nby op and scale:\n  all_reduce, one node: 3 rows compared");
  const std::size_t several = text.find("\n  all_reduce, several nodes: 1 row compared");
  ASSERT_NE(one_node, std::string::npos) << text;
  ASSERT_NE(several, std::string::npos) << text;
  EXPECT_LT(one_node, several);
  EXPECT_EQ(text.find("all_gather, "), std::string::npos) << text;  // its row has no figure

  const CommandResult summary = run_binary("validate --summary '" + csv.string() + "'");
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("\n| op | GPUs on | rows |"), std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find("\n| all_reduce | one node | 3 | "), std::string::npos)
      << summary.output;
  EXPECT_NE(summary.output.find("\n| all_reduce | several nodes | 1 | "), std::string::npos)
      << summary.output;
}

TEST(ValidateCommand, LimitsExitOneWithOneLineSayingWhichFigureIsAbove) {
  const fs::path csv = write_csv(scratch_folder("limits"), published_calibration_header() + kRows);
  const CommandResult strict =
      run_binary("validate --summary --max-median 0 '" + csv.string() + "'");
  EXPECT_EQ(strict.exit_code, 1) << strict.output;
  EXPECT_NE(strict.output.find("\nvalidate: median |error| "), std::string::npos) << strict.output;
  EXPECT_NE(strict.output.find(" is above --max-median 0 (0.0%)"), std::string::npos)
      << strict.output;
  const CommandResult loose =
      run_binary("validate --summary --max-median 100 --max-p90 100 '" + csv.string() + "'");
  EXPECT_EQ(loose.exit_code, 0) << loose.output;
  const CommandResult negative = run_binary("validate --max-p90 -1 '" + csv.string() + "'");
  EXPECT_EQ(negative.exit_code, 2) << negative.output;
}

TEST(ValidateCommand, PlotDirGetsADataFileAndAScriptPerMachine) {
  const fs::path dir = scratch_folder("plots");
  const fs::path csv = write_csv(dir, published_calibration_header() + kRows);
  const CommandResult result = run_binary("validate --summary --plot-dir '" +
                                          (dir / "plots").string() + "' '" + csv.string() + "'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const char* name : {"box.dat", "box.gp", "two_boxes.dat", "two_boxes.gp"}) {
    EXPECT_TRUE(fs::exists(dir / "plots" / name)) << name;
  }
  std::ifstream data(dir / "plots" / "box.dat");
  std::stringstream text;
  text << data.rdbuf();
  // Two series (all_reduce, all_reduce ring forced), sizes ascending within each.
  EXPECT_NE(text.str().find("# series 0: all_reduce\n"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\n\n\n# series 1: all_reduce ring forced\n"), std::string::npos)
      << text.str();
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) {
    EXPECT_GT(fs::file_size(dir / "plots" / "box.png"), 1000u);
  }
}

// The text of the file's line `line` in validate's listing.
std::string listed_line(const std::string& text, int line) {
  const std::size_t at = text.find(fmt::format("\n{:8}  ", line));
  if (at == std::string::npos) return "";
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

TEST(ValidateCommand, ARunThatTurnedNvlsOffIsTimedWithoutIt) {
  // The same 1 GiB all-reduce on eight H100: NVLS by default, something else with NVLS off.
  const std::string rows =
      "box,NVIDIA H100 80GB HBM3,8,1,8,NVSwitch,none,all_reduce,float,sum,1073741824,"
      "4000,,,out-of-place,default,,default,,src,\n"
      "box,NVIDIA H100 80GB HBM3,8,1,8,NVSwitch,none,all_reduce,float,sum,1073741824,"
      "4700,,,out-of-place,default,,off (NCCL_NVLS_ENABLE=0),,src,\n"
      "box,NVIDIA H100 80GB HBM3,8,1,8,NVSwitch,none,all_reduce,float,sum,1073741824,"
      "4000,,,out-of-place,NVLS,,off,,src,\n";
  const std::string text = validated("nvls_off", rows);
  EXPECT_NE(listed_line(text, 2).find(" nvls/"), std::string::npos) << text;
  const std::string off = listed_line(text, 3);
  ASSERT_FALSE(off.empty()) << text;
  EXPECT_EQ(off.find(" nvls"), std::string::npos) << off;
  // A run that forced NVLS ran it, whatever the column says.
  EXPECT_NE(listed_line(text, 4).find(" nvls/"), std::string::npos) << text;
}

// The predicted time (us) of a listed line: its sixth column.
double listed_prediction_us(const std::string& listed) {
  std::istringstream columns(listed);
  std::string line, op, size, forced, measured;
  double predicted = 0;
  columns >> line >> op >> size >> forced >> measured >> predicted;
  return predicted;
}

TEST(ValidateCommand, TraysInSeparateNvlinkDomainsTalkOverTheirNics) {
  // The same 8 GiB all-gather on two GB300 trays: over the rack's NVLink, and between trays of
  // two racks, over each tray's four 800 Gb/s NICs (the preset's), about half as fast.
  const std::string rows =
      "rack,NVIDIA GB300,8,2,4,NVL72 (single NVLink domain),n/a,all_gather,float,none,8589934592,"
      "11000,,,out-of-place,default,,default,,src,\n"
      "apart,NVIDIA GB300,8,2,4,RoCE between trays in distinct NVLink domains,RDMA NICs,"
      "all_gather,float,none,8589934592,21000,,,out-of-place,default,,default,,src,\n";
  const std::string text = validated("domains", rows);
  const double rack_us = listed_prediction_us(listed_line(text, 2));
  const double apart_us = listed_prediction_us(listed_line(text, 3));
  ASSERT_GT(rack_us, 0) << text;
  EXPECT_GT(apart_us, 1.5 * rack_us) << text;
}

TEST(ValidateCommand, BadInputExitsTwoWithOneLineNamingFileLineAndField) {
  const fs::path dir = scratch_folder("errors");
  const CommandResult missing = run_binary("validate '" + (dir / "none.csv").string() + "'");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("none.csv: cannot read the CSV file"), std::string::npos)
      << missing.output;

  const fs::path bad_size =
      write_csv(dir, published_calibration_header() + kRows +
                         "box,NVIDIA H100,8,1,8,,,all_reduce,float,sum,abc,10,,,,,,,,,\n");
  const CommandResult bad = run_binary("validate '" + bad_size.string() + "'");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("m.csv:7: size_bytes 'abc': expected an integer of at least 0\n"),
            std::string::npos)
      << bad.output;
  EXPECT_EQ(bad.output.find(" compared: "), std::string::npos);  // nothing printed before

  // A GPU without a preset, an op or a forced algorithm the model does not time: the rows are
  // listed as not predicted and the others still give their figures.
  const fs::path unsupported =
      write_csv(dir, published_calibration_header() + kRows +
                         "v,NVIDIA P100,8,1,8,,,all_reduce,float,sum,8,10,,,,,,,,,\n"
                         "box,NVIDIA H100 80GB HBM3,8,1,8,,none,gather,float,none,8,10,,,,,,,,,\n"
                         "box,NVIDIA H100 80GB HBM3,8,1,8,,none,all_reduce,float,sum,8,10,,,,"
                         "MSCCL,,,,,\n");
  const CommandResult gpu = run_binary("validate '" + unsupported.string() + "'");
  EXPECT_EQ(gpu.exit_code, 0) << gpu.output;
  EXPECT_NE(gpu.output.find("1 row not predicted (v: gpu 'NVIDIA P100': expected a name holding "
                            "one of"),
            std::string::npos)
      << gpu.output;
  EXPECT_NE(gpu.output.find("1 row not predicted (box: op gather is not timed)"), std::string::npos)
      << gpu.output;
  EXPECT_NE(gpu.output.find("1 row not predicted (box: nccl_algo MSCCL is not timed)"),
            std::string::npos)
      << gpu.output;

  const fs::path two_machines =
      write_csv(dir, published_calibration_header() + kRows +
                         "box,NVIDIA H100 80GB HBM3,16,2,8,,,all_reduce,float,sum,8,10,,,,,,,,,\n");
  const CommandResult mixed = run_binary("validate '" + two_machines.string() + "'");
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(mixed.output.find("m.csv:7: config_id box: gpu, gpus_total, nodes, gpus_per_node, "
                              "nic or what interconnect says of NVLink domains differ from line "
                              "2's; expected one machine per config_id"),
            std::string::npos)
      << mixed.output;

  const fs::path no_columns = write_csv(dir, "config_id,gpu\nbox,H100\n");
  const CommandResult columns = run_binary("validate '" + no_columns.string() + "'");
  EXPECT_EQ(columns.exit_code, 2);
  EXPECT_NE(columns.output.find("m.csv: missing columns gpus_total, nodes"), std::string::npos)
      << columns.output;
}

// One CSV record with every field in double quotes (RFC 4180: a quote inside written twice).
std::string quoted_record(const std::vector<std::string>& fields) {
  std::string line;
  for (const std::string& field : fields) {
    if (!line.empty()) line += ',';
    line += '"';
    for (const char c : field) line += c == '"' ? std::string("\"\"") : std::string(1, c);
    line += '"';
  }
  return line + "\n";
}

// The published set, read where it lies beside the checkout, gives the same summary with its
// columns in reverse order and every field quoted: validate reads columns by their names.
TEST(ValidateCommand, ThePublishedSetReadsTheSameWithItsColumnsInAnotherOrder) {
  const std::string published = test_calibration::published_calibration_path();
  ASSERT_TRUE(fs::exists(published)) << "missing " << published;
  const CsvTable table = CsvTable::read_file(published);
  std::vector<std::string> columns = table.columns();
  std::reverse(columns.begin(), columns.end());
  std::string text = quoted_record(columns);
  for (const CsvRecord& record : table.records()) {
    std::vector<std::string> fields = record.fields;
    std::reverse(fields.begin(), fields.end());
    text += quoted_record(fields);
  }
  const fs::path reordered = write_csv(scratch_folder("reordered"), text);
  std::ostringstream original_out, reordered_out, err;
  ASSERT_EQ(run_validate_command({.file = published, .summary = true}, original_out, err), 0)
      << err.str();
  ASSERT_EQ(run_validate_command({.file = reordered.string(), .summary = true}, reordered_out, err),
            0)
      << err.str();
  EXPECT_NE(original_out.str().find("\n| all |  |  | "), std::string::npos) << original_out.str();
  EXPECT_EQ(reordered_out.str(), original_out.str());
}

// The ranges validate and perf print come from bands kept in the code; they must be the bands the
// published set gives the collective model as it is now, and hold most of its rows.
TEST(ValidateCommand, TheKeptCollectiveBandsAreThePublishedSetsBands) {
  const CsvTable table = CsvTable::read_file(test_calibration::published_calibration_path());
  const std::vector<CalibrationRow> rows = read_calibration_rows(table);
  const std::vector<MachineRows> machines = predictions_by_machine(table, rows);
  const std::vector<ErrorBand> measured = error_bands(family_errors(machines));
  const std::vector<ErrorBand>& kept = published_collective_bands();
  ASSERT_EQ(measured.size(), kept.size());
  for (std::size_t i = 0; i < kept.size(); ++i) {
    EXPECT_EQ(measured[i].family, kept[i].family);
    EXPECT_EQ(measured[i].rows, kept[i].rows);
    EXPECT_NEAR(measured[i].low, kept[i].low, 1e-9) << "regenerate validation/collective_range.cc";
    EXPECT_NEAR(measured[i].high, kept[i].high, 1e-9) << "regenerate validation/collective_range.cc";
  }
  std::ostringstream out, err;
  ASSERT_EQ(run_validate_command({.file = test_calibration::published_calibration_path(),
                                  .summary = true},
                                 out, err),
            0);
  EXPECT_NE(out.str().find("419 of 457 rows inside their range"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace spmd
