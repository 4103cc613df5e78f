// `spmdsim validate` on published training runs: a file with the published-steps header is told
// from a calibration file, every row predicted with its tokens/s and MFU, grouped per source and
// per GPU with the closing `| all |` row, rows that cannot be predicted listed with why, bad
// fields an error naming the line, and the published set beside the checkout
// (../shared/training) predicted as docs/validation.md reports it.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "cli/validate_command.h"

#include <nlohmann/json.hpp>
#include "reference/error.h"
#include "support/csv_table.h"
#include "support/output_file.h"
#include "tests/spmdsim_binary.h"
#include "training/training_memory.h"
#include "training/training_prediction.h"
#include "training/training_workload.h"
#include "tests/error_of.h"
#include "tests/published_calibration.h"

namespace spmd {
namespace {

namespace fs = std::filesystem;
using test_errors::error_of;

using test_calibration::published_training_header;
using test_calibration::published_training_path;

// A row in the published columns from the few fields a test sets (the rest empty).
std::string row(const std::map<std::string, std::string>& fields) {
  std::istringstream columns(published_training_header());
  std::string line, column, text;
  std::getline(columns, line);
  std::istringstream names(line);
  bool first = true;
  while (std::getline(names, column, ',')) {
    if (!first) text += ",";
    first = false;
    const auto at = fields.find(column);
    if (at != fields.end()) {
      const bool quoted = at->second.find(',') != std::string::npos;
      text += quoted ? "\"" + at->second + "\"" : at->second;
    }
  }
  return text + "\n";
}

std::map<std::string, std::string> llama_8b_on_h100() {
  return {{"source_id", "TEST-001"}, {"model", "Llama-3-8B"}, {"layers", "32"},
          {"d_model", "4096"}, {"heads", "32"}, {"kv_heads", "8"}, {"d_ff", "14336"},
          {"vocabulary", "128256"}, {"seq_len", "8192"}, {"global_batch_seqs", "128"},
          {"micro_batch", "1"}, {"gpu", "H100-SXM5-80GB"}, {"gpus_total", "8"},
          {"gpus_per_node", "8"}, {"tp", "1"}, {"pp", "1"}, {"precision", "bf16"},
          {"measured_step_s", "10.0"}, {"software", "Megatron-Bridge, NeMo container 26.04"}};
}

struct Result {
  int code = 0;
  std::string out, err;
};

// Each test writes in a folder of its own: CTest runs the tests of this file at once.
Result validate(const std::string& rows, ValidateOptions options = {}) {
  const fs::path dir = fs::temp_directory_path() /
                       ("spmdsim_training_validate_test_" +
                        std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  fs::create_directories(dir);
  const fs::path csv = dir / "runs.csv";
  write_output_file(csv, published_training_header() + rows);
  options.file = csv.string();
  std::ostringstream out, err;
  Result result;
  result.code = run_validate_command(options, out, err);
  result.out = out.str();
  result.err = err.str();
  return result;
}

TEST(TrainingValidate, PredictsEachRowBesideItsPublishedStep) {
  auto second = llama_8b_on_h100();
  second["source_id"] = "OTHER-001";
  second["gpu"] = "Gaudi 3";
  auto unpublished = llama_8b_on_h100();
  unpublished["source_id"] = "TEST-002";
  unpublished["measured_step_s"] = "";
  const Result r = validate(row(llama_8b_on_h100()) + row(second) + row(unpublished));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("3 training runs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TEST-001"), std::string::npos);
  EXPECT_NE(r.out.find("dp8"), std::string::npos);
  EXPECT_NE(r.out.find("TEST: 1 row with a step time"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 row predicted without a published step time"), std::string::npos);
  EXPECT_NE(r.out.find("1 row not predicted (no accelerator model for 'Gaudi 3')"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  H100 SXM: 1 row"), std::string::npos) << r.out;
}

TEST(TrainingValidate, SummaryEndsEachTableWithAllRows) {
  ValidateOptions options;
  options.summary = true;
  const Result r = validate(row(llama_8b_on_h100()), options);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("| source | rows |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| GPU | rows |"), std::string::npos);
  EXPECT_NE(r.out.find("| all | 1 |"), std::string::npos);
}

TEST(TrainingValidate, LimitsFailTheRunWithOneLine) {
  ValidateOptions options;
  options.limits.max_median = 0.0001;  // 10 s published: the model will not be that close
  const Result r = validate(row(llama_8b_on_h100()), options);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("is above --max-median"), std::string::npos) << r.err;
}

TEST(TrainingValidate, BadFieldsNameTheLineAndTheField) {
  auto bad_tp = llama_8b_on_h100();
  bad_tp["tp"] = "two";
  EXPECT_NE(error_of([&] { validate(row(bad_tp)); }).find("runs.csv:2: tp 'two': expected an "
                                                          "integer of at least 1"),
            std::string::npos);
  auto odd = llama_8b_on_h100();
  odd["tp"] = "3";
  EXPECT_NE(error_of([&] { validate(row(odd)); })
                .find("runs.csv:2: tp x pp x cp = 3 x 1 x 1 = 3: expected a divisor of gpus_total "
                      "(8)"),
            std::string::npos);
  auto caffe = llama_8b_on_h100();
  caffe["software"] = "Caffe 1.0";
  EXPECT_NE(error_of([&] { validate(row(caffe)); })
                .find("runs.csv:2: software 'Caffe 1.0': expected a framework the training model "
                      "knows"),
            std::string::npos);
  auto int4 = llama_8b_on_h100();
  int4["precision"] = "int4";
  EXPECT_NE(error_of([&] { validate(row(int4)); })
                .find("runs.csv:2: precision 'int4': expected bf16, fp16, fp8, mxfp8 or nvfp4"),
            std::string::npos);
  auto fp4 = llama_8b_on_h100();
  fp4["precision"] = "nvfp4";
  EXPECT_NE(error_of([&] { validate(row(fp4)); })
                .find("runs.csv:2: precision nvfp4: H100 SXM has no nvfp4 tensor cores"),
            std::string::npos);
}

// The published set (docs/validation.md, "Training steps"): every row with a step time is
// predicted, and the errors stay where the model puts them now (median 8.9%, p90 36.9%, with
// a little room); a change that loses accuracy fails here.
TEST(TrainingValidate, ThePublishedSetIsPredictedAsTheDocsReport) {
  ValidateOptions options;
  options.file = published_training_path();
  options.summary = true;
  options.limits.max_median = 0.10;
  options.limits.max_p90 = 0.38;
  std::ostringstream out, err;
  EXPECT_EQ(run_validate_command(options, out, err), 0) << err.str() << out.str();
  EXPECT_NE(out.str().find("| all | 100 |"), std::string::npos) << out.str();
}

// The ranges printed with each prediction come from bands kept in the code; they must be the
// bands the published set gives the model as it is now (a model change regenerates them).
TEST(TrainingValidate, TheKeptErrorBandsAreThePublishedSetsBands) {
  const CsvTable table = CsvTable::read_file(published_training_path());
  const std::vector<training::PublishedRun> runs = training::read_published_runs(table);
  const std::vector<ErrorBand> measured =
      training::error_bands_of(training::predict_runs(runs));
  const std::vector<ErrorBand>& kept = training::published_error_bands();
  ASSERT_EQ(measured.size(), kept.size());
  for (std::size_t i = 0; i < kept.size(); ++i) {
    EXPECT_EQ(measured[i].family, kept[i].family);
    EXPECT_EQ(measured[i].rows, kept[i].rows);
    EXPECT_NEAR(measured[i].low, kept[i].low, 1e-9) << "regenerate training/prediction_range.cc";
    EXPECT_NEAR(measured[i].high, kept[i].high, 1e-9) << "regenerate training/prediction_range.cc";
  }
}

// Every published row written as a training workload (its non-empty fields, numbers as JSON
// numbers where they parse) predicts the same step as validate does for the row.
TEST(TrainingWorkload, EveryPublishedRowAsAWorkloadGivesValidatesStep) {
  const CsvTable table = CsvTable::read_file(published_training_path());
  const std::vector<training::PublishedRun> rows = training::read_published_runs(table);
  const std::vector<training::TrainingPrediction> by_row = training::predict_runs(rows);
  const std::vector<std::string>& fields = training::training_workload_fields();
  int compared = 0;
  for (std::size_t i = 0; i < table.records().size(); ++i) {
    nlohmann::json workload = {{"kind", "training"}};
    for (const std::string& column : table.columns()) {
      if (std::find(fields.begin(), fields.end(), column) == fields.end()) continue;
      const std::string& text = table.field(table.records()[i], column);
      if (text.empty()) continue;
      char* end = nullptr;
      const long long number = std::strtoll(text.c_str(), &end, 10);
      workload[column] = (*end == '\0') ? nlohmann::json(number) : nlohmann::json(text);
    }
    const std::vector<training::PublishedRun> as_workload = {
        training::training_run_from_json(workload, "row.json")};
    const training::TrainingPrediction p = training::predict_runs(as_workload).front();
    ASSERT_EQ(p.step.has_value(), by_row[i].step.has_value()) << rows[i].source_id;
    if (!p.step) continue;
    EXPECT_EQ(p.step->total_s(), by_row[i].step->total_s()) << rows[i].source_id;
    ++compared;
  }
  EXPECT_GE(compared, 100);
}

// ZeRO-3 with context parallelism shards over the data and context ranks, as an fsdp degree of
// dp does (the frameworks shard over fsdp x cp): the same job and memory. ZeRO-2 shards as much.
TEST(TrainingWorkload, ZeroStagesShardLikeAnFsdpDegreeOfEveryDataRank) {
  nlohmann::json base = {{"kind", "training"},      {"model", "Llama-3-70B"},
                         {"layers", 80},            {"d_model", 8192},
                         {"heads", 64},             {"kv_heads", 8},
                         {"d_ff", 28672},           {"vocabulary", 128256},
                         {"seq_len", 8192},         {"global_batch_seqs", 64},
                         {"gpu", "H100-SXM5-80GB"}, {"gpus_total", 64},
                         {"dp", 32},                {"cp", 2},
                         {"precision", "bf16"},     {"software", "torchtitan, torch.compile"}};
  nlohmann::json by_degree = base;
  by_degree["fsdp"] = 32;
  base["zero_stage"] = 3;
  const training::PublishedRun by_stage_run = training::training_run_from_json(base, "a.json");
  const training::PublishedRun by_degree_run = training::training_run_from_json(by_degree, "b.json");
  ASSERT_TRUE(by_stage_run.job.has_value()) << by_stage_run.not_predicted;
  ASSERT_TRUE(by_degree_run.job.has_value()) << by_degree_run.not_predicted;
  const training::TrainingJob& zero3 = *by_stage_run.job;
  const training::TrainingJob& fsdp = *by_degree_run.job;
  EXPECT_EQ(zero3.layout.fsdp, 32);
  EXPECT_EQ(fsdp.layout.fsdp, 32);
  EXPECT_EQ(training::peak_memory(zero3).total_bytes(), training::peak_memory(fsdp).total_bytes());
  base["zero_stage"] = 2;
  const training::PublishedRun zero2 = training::training_run_from_json(base, "c.json");
  ASSERT_TRUE(zero2.job.has_value()) << zero2.not_predicted;
  EXPECT_EQ(zero2.job->layout.fsdp, 32);
}

TEST(TrainingWorkload, TrainPrintsTheStepAndBadFieldsAreExitTwo) {
  const CommandResult ok = run_binary(std::string("train ") + SPMD_SOURCE_DIR +
                                      "/docs/workloads/training/llama3-8b-h100-fsdp8.json");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("step time: "), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("memory per device: "), std::string::npos) << ok.output;

  const fs::path dir = fs::temp_directory_path() / "spmdsim_train_test";
  fs::create_directories(dir);
  write_output_file(dir / "bad.json", R"({"kind": "training", "model": "x", "layers": 32,
      "d_model": 4096, "heads": 32, "seq_len": 4096, "global_batch_seqs": 8, "gpu": "H100",
      "gpus_total": 8, "tp": [2], "software": "Megatron-LM"})");
  const CommandResult bad = run_binary("train " + (dir / "bad.json").string());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("bad.json: tp [2]: expected a string or a number"), std::string::npos)
      << bad.output;
  write_output_file(dir / "exchange.json", R"({"kind": "training", "model": "Llama-3-8B",
      "layers": 32, "d_model": 4096, "heads": 32, "kv_heads": 8, "d_ff": 14336,
      "vocabulary": 128256, "seq_len": 65536, "global_batch_seqs": 4, "gpu": "H100-SXM5-80GB",
      "gpus_total": 8, "cp": 2, "fsdp": 4, "software": "torchtitan", "precision": "bf16",
      "cp_comm_type": "broadcast"})");
  const CommandResult exchange = run_binary("train " + (dir / "exchange.json").string());
  EXPECT_EQ(exchange.exit_code, 2);
  EXPECT_NE(exchange.output.find("cp_comm_type 'broadcast': expected p2p (ring), allgather "
                                 "(PyTorch's context_parallel) or a2a (all_to_all, Ulysses)"),
            std::string::npos)
      << exchange.output;
  write_output_file(dir / "typo.json", R"({"kind": "training", "tensor": 2})");
  const CommandResult typo = run_binary("train " + (dir / "typo.json").string());
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.output.find("typo.json: unknown field 'tensor', expected one of kind, name"),
            std::string::npos)
      << typo.output;
}

}  // namespace
}  // namespace spmd
