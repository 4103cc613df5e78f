// `spmdsim plan` and its search (training/layout_search.h): the same output on every run and for
// any thread count, held layout fields kept, drops counted by reason, bad input one line and exit
// 2, results that go to JSON and back unchanged, and published layouts
// (../shared/training/published_steps.csv) found by the search with the step `validate` predicts
// for them, in the top 10 or behind a layout predicted faster.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "reference/error.h"
#include "support/csv_table.h"
#include "tests/published_calibration.h"
#include "tests/spmdsim_binary.h"
#include "training/layout_search.h"
#include "training/training_prediction.h"

namespace spmd {
namespace {

namespace fs = std::filesystem;
using training::PlanResult;

nlohmann::json llama_70b() {
  return {{"kind", "training"},    {"model", "Llama-3-70B"},   {"layers", 80},
          {"d_model", 8192},       {"heads", 64},              {"kv_heads", 8},
          {"d_ff", 28672},         {"vocabulary", 128256},     {"seq_len", 8192},
          {"global_batch_seqs", 512},
          {"software", "Megatron-Bridge / Megatron-Core, NeMo container 25.11"}};
}

nlohmann::json llama_8b() {
  nlohmann::json model = llama_70b();
  model["model"] = "Llama-3-8B";
  model["layers"] = 32;
  model["d_model"] = 4096;
  model["heads"] = 32;
  model["d_ff"] = 14336;
  model["global_batch_seqs"] = 128;
  return model;
}

// A model file in the test's own folder.
std::string model_file(const std::string& name, const nlohmann::json& json) {
  const fs::path folder = fs::temp_directory_path() / "spmdsim_plan_test";
  fs::create_directories(folder);
  const fs::path path = folder / (name + ".json");
  std::ofstream(path) << json.dump();
  return path.string();
}

training::PlanOutcome search(const nlohmann::json& model, const std::string& preset, int devices,
                             unsigned threads = 2) {
  const training::PlanModel plan = training::plan_model_from_json(model, "model.json");
  const std::string description =
      preset.empty() ? std::string() : training::accelerator_of_preset(preset)->description;
  return training::search_layouts(training::plan_setting(plan, description, devices), threads);
}

std::string error_of_search(const nlohmann::json& model, const std::string& preset,
                            int devices) {
  try {
    search(model, preset, devices);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Plan, TheSameOutputOnEveryRunAndForAnyThreadCount) {
  const std::string model = model_file("llama70b", llama_70b());
  const std::string command =
      "plan --model " + model + " --machine hgx-h100 --devices 1024,512 --top 20";
  const CommandResult one = run_binary(command + " --threads 1");
  const CommandResult two = run_binary(command + " --threads 2");
  const CommandResult again = run_binary(command + " --threads 2");
  const CommandResult five = run_binary(command + " --threads 5");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(one.output, two.output);
  EXPECT_EQ(two.output, again.output);
  EXPECT_EQ(one.output, five.output);
  EXPECT_NE(one.output.find("layouts considered: "), std::string::npos) << one.output;
  EXPECT_NE(one.output.find("why: #1 "), std::string::npos) << one.output;
}

TEST(Plan, EvaluatedRangesMergeToTheWholeSearchThroughJson) {
  const training::PlanModel model = training::plan_model_from_json(llama_8b(), "model.json");
  const training::PlanSetting setting = training::plan_setting(model, "H100 SXM", 64);
  const training::CandidateList list = training::enumerate_candidates(setting);
  ASSERT_GT(list.candidates.size(), 100u);
  const std::size_t half = list.candidates.size() / 2;
  // Two "processes", their results through JSON, merged in the wrong order.
  std::vector<PlanResult> merged;
  for (auto [begin, end] : {std::pair{half, list.candidates.size()}, std::pair{std::size_t{0}, half}}) {
    const std::vector<PlanResult> part =
        training::evaluate_candidates(setting, list.candidates, begin, end, 1);
    const nlohmann::json sent = part;
    const auto received = nlohmann::json::parse(sent.dump()).get<std::vector<PlanResult>>();
    merged.insert(merged.end(), received.begin(), received.end());
  }
  std::vector<PlanResult> whole =
      training::evaluate_candidates(setting, list.candidates, 0, list.candidates.size(), 2);
  training::rank_results(merged);
  training::rank_results(whole);
  ASSERT_EQ(merged.size(), whole.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(nlohmann::json(merged[i]), nlohmann::json(whole[i])) << i;
    EXPECT_EQ(merged[i].step.total_s(), whole[i].step.total_s()) << i;
  }
}

// Processes of `mpirun` each summarize a strided share; combined (in any order) the summaries
// are the whole search's: the same kept results in the same order, counts and named layouts.
void expect_strided_shares_combine_to_the_whole(const training::PlanSetting& setting,
                                                const training::KeptResults& kept) {
  const training::CandidateList list = training::enumerate_candidates(setting);
  const training::ShareSummary whole = training::summarize_share(
      training::evaluate_candidates(setting, list.candidates, 0, list.candidates.size(), 2), kept);
  for (const std::size_t stride : {2u, 3u, 7u}) {
    std::vector<training::ShareSummary> shares;
    for (std::size_t first = stride; first-- > 0;) {  // last share first
      shares.push_back(training::summarize_share(
          training::evaluate_candidates_strided(setting, list.candidates, first, stride, 1), kept));
    }
    const training::ShareSummary combined = training::combine_shares(std::move(shares), kept);
    EXPECT_EQ(combined.ranked_count, whole.ranked_count) << stride;
    EXPECT_EQ(combined.not_fitting, whole.not_fitting) << stride;
    EXPECT_EQ(combined.layout_errors, whole.layout_errors) << stride;
    ASSERT_EQ(combined.ranked.size(), whole.ranked.size()) << stride;
    for (std::size_t i = 0; i < whole.ranked.size(); ++i) {
      ASSERT_EQ(combined.ranked[i].index, whole.ranked[i].index) << stride << " " << i;
    }
    ASSERT_EQ(combined.smallest_unfitting.has_value(), whole.smallest_unfitting.has_value());
    if (whole.smallest_unfitting) {
      EXPECT_EQ(combined.smallest_unfitting->index, whole.smallest_unfitting->index) << stride;
    }
    ASSERT_EQ(combined.first_refused.has_value(), whole.first_refused.has_value());
    if (whole.first_refused) {
      EXPECT_EQ(combined.first_refused->index, whole.first_refused->index) << stride;
    }
  }
}

TEST(Plan, SummariesOfStridedSharesCombineToTheWholeSearch) {
  const training::PlanModel model = training::plan_model_from_json(llama_8b(), "model.json");
  const training::PlanSetting setting = training::plan_setting(model, "H100 SXM", 64);
  expect_strided_shares_combine_to_the_whole(setting, {});
  expect_strided_shares_combine_to_the_whole(setting, {.best_speeds = 1});
  expect_strided_shares_combine_to_the_whole(setting, {.best_speeds = 10});
}

// Kept: every layout of the best speeds (those equivalent_runs folds into the top rows), and
// nothing slower; the counts still count every ranked layout.
TEST(Plan, KeepsEveryLayoutOfTheBestSpeeds) {
  const training::PlanModel model = training::plan_model_from_json(llama_8b(), "model.json");
  const training::PlanSetting setting = training::plan_setting(model, "H100 SXM", 64);
  const training::PlanOutcome all = training::search_layouts(setting, 2);
  const training::PlanOutcome top = training::search_layouts(setting, 2, {.best_speeds = 3});
  EXPECT_EQ(top.counts.ranked, all.counts.ranked);
  ASSERT_GT(all.results.size(), 100u);
  ASSERT_LT(top.results.size(), all.results.size());
  std::vector<double> speeds;
  for (const PlanResult& r : all.results) {
    if (speeds.empty() || speeds.back() != r.tokens_per_s_per_gpu) speeds.push_back(r.tokens_per_s_per_gpu);
  }
  const auto kept = static_cast<std::size_t>(std::ranges::count_if(
      all.results, [&](const PlanResult& r) { return r.tokens_per_s_per_gpu >= speeds[2]; }));
  ASSERT_EQ(top.results.size(), kept);
  for (std::size_t i = 0; i < kept; ++i) EXPECT_EQ(top.results[i].index, all.results[i].index);
}

TEST(Plan, SummariesCombineWhereNothingFits) {
  const training::PlanModel model = training::plan_model_from_json(llama_70b(), "model.json");
  const training::PlanSetting setting = training::plan_setting(model, "H100 SXM", 2);
  expect_strided_shares_combine_to_the_whole(setting, {});
}

TEST(Plan, RanksByTokensPerSecondAndCountsEveryDrop) {
  const training::PlanOutcome outcome = search(llama_70b(), "hgx-h100", 1024);
  const training::PlanCounts& c = outcome.counts;
  EXPECT_GE(c.considered, 1000);
  EXPECT_GT(c.not_dividing, 0);
  EXPECT_GT(c.not_fitting, 0);
  EXPECT_EQ(c.considered, c.not_dividing + c.layout_errors + c.not_fitting + c.ranked);
  EXPECT_EQ(static_cast<std::int64_t>(outcome.results.size()), c.ranked);
  for (std::size_t i = 1; i < outcome.results.size(); ++i) {
    ASSERT_GE(outcome.results[i - 1].tokens_per_s_per_gpu, outcome.results[i].tokens_per_s_per_gpu);
  }
  for (const PlanResult& r : outcome.results) {
    ASSERT_LE(r.memory.total_bytes(), 80e9) << training::candidate_text(r.candidate);
  }
}

TEST(Plan, HeldFieldsAreKept) {
  nlohmann::json model = llama_70b();
  model["tp"] = 4;
  model["pp"] = 4;
  model["cp"] = 1;
  model["precision"] = "bf16";
  model["recompute"] = "full";
  const training::PlanOutcome outcome = search(model, "hgx-h100", 256);
  ASSERT_FALSE(outcome.results.empty());
  for (const PlanResult& r : outcome.results) {
    EXPECT_EQ(r.candidate.tensor, 4);
    EXPECT_EQ(r.candidate.pipeline, 4);
    EXPECT_EQ(r.candidate.precision, training::MatmulPrecision::bf16);
    EXPECT_EQ(r.candidate.recompute, training::Recompute::full);
    EXPECT_EQ(r.candidate.data, 16);
  }
  // Left free, the search reaches other degrees and precisions.
  const training::PlanOutcome free = search(llama_70b(), "hgx-h100", 256);
  EXPECT_TRUE(std::any_of(free.results.begin(), free.results.end(), [](const PlanResult& r) {
    return r.candidate.tensor != 4 && r.candidate.precision == training::MatmulPrecision::fp8;
  }));
}

TEST(Plan, BadInputIsOneLineAndExitTwo) {
  const std::string model = model_file("llama70b_bad", llama_70b());
  nlohmann::json contradicting = llama_70b();
  contradicting["tp"] = 8;
  contradicting["pp"] = 8;
  contradicting["cp"] = 2;
  contradicting["dp"] = 4;
  const std::string contradicting_file = model_file("contradicting", contradicting);
  nlohmann::json unpipelined = llama_70b();
  unpipelined["pp"] = 1;
  unpipelined["vp"] = 5;
  const std::string unpipelined_file = model_file("unpipelined", unpipelined);
  nlohmann::json fp8 = llama_70b();
  fp8["precision"] = "fp8";
  const std::string fp8_file = model_file("fp8", fp8);
  const std::pair<std::string, std::string> cases[] = {
      {"plan --model " + model + " --machine hgx-h100 --devices 64 --top 0",
       "--top 0: expected at least 1"},
      {"plan --model " + contradicting_file + " --machine hgx-h100 --devices 1024",
       "dp 4: expected dp x tp x pp x cp = the devices (1024), got 4 x 8 x 8 x 2 = 512"},
      {"plan --model " + unpipelined_file + " --machine hgx-h100 --devices 64",
       "the layout fields it holds leave no layout on 64 devices; of 1920 layouts the first is "
       "refused: vp 5: expected 1 without a pipeline (pp 1)"},
      {"plan --model " + fp8_file + " --machine hgx-a100 --devices 64",
       "precision fp8: A100 SXM 80GB has no fp8 tensor cores"},
      {"plan --model " + model + " --machine hgx-h99 --devices 64",
       "--machine hgx-h99: expected a GPU machine preset: "},
      {"plan --model " + model + " --machines hgx-h100:cheap --devices 64",
       "--machines hgx-h100:cheap: expected PRESET or PRESET:PRICE"},
      {"plan --model " + model + " --machine hgx-h100 --devices 7",
       "devices 7: expected a count some layout divides"},
      {"plan --model " + model + " --machine hgx-h100 --devices 2",
       "no layout fits on 2 x H100 SXM (80.0 GB each): devices 2: expected more devices or a "
       "smaller model; the smallest of"},
  };
  for (const auto& [arguments, expected] : cases) {
    const CommandResult result = run_binary(arguments);
    EXPECT_EQ(result.exit_code, 2) << arguments << "\n" << result.output;
    EXPECT_NE(result.output.find(expected), std::string::npos) << arguments << "\n"
                                                               << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << result.output;
  }
}

// Llama 3 70B as a `transformer` workload (the simulated model of `run` and `scale`), its layout
// fields left out.
nlohmann::json llama_70b_transformer() {
  return {{"kind", "transformer"}, {"name", "llama3-70b"}, {"layers", 80},
          {"d_model", 8192},       {"heads", 64},          {"kv_heads", 8},
          {"d_ff", 28672},         {"vocabulary", 128256}, {"sequence", 8192},
          {"global_batch", 512}};
}

// The training workload of the same job: the training model's defaults for the software.
nlohmann::json llama_70b_as_training() {
  nlohmann::json model = llama_70b();
  model.erase("model");
  model.erase("software");
  model["name"] = "llama3-70b";
  return model;
}

TEST(Plan, ATransformerWorkloadIsPlannedAsTheTrainingWorkloadOfItsJob) {
  const std::string transformer = model_file("transformer70b", llama_70b_transformer());
  const std::string training = model_file("training70b", llama_70b_as_training());
  const std::string flags = " --machine hgx-h100 --devices 256,1024 --top 5";
  const CommandResult from_transformer = run_binary("plan --model " + transformer + flags);
  const CommandResult from_training = run_binary("plan --model " + training + flags);
  ASSERT_EQ(from_transformer.exit_code, 0) << from_transformer.output;
  EXPECT_EQ(from_transformer.output, from_training.output);
  EXPECT_NE(from_transformer.output.find("layouts considered: 96000"), std::string::npos)
      << from_transformer.output;
}

TEST(Plan, ATransformerWorkloadsLayoutFieldsAreHeld) {
  nlohmann::json model = llama_70b_transformer();
  model["tensor"] = 8;
  model["pipeline"] = 4;
  model["context"] = 1;
  model["data"] = "auto";
  model["distributed_optimizer"] = true;
  model["sequence_parallel"] = true;
  model["recompute"] = "selective";
  model["dtype"] = "bfloat16";
  model["micro_batch_size"] = 1;
  const training::PlanOutcome outcome = search(model, "hgx-h100", 1024);
  ASSERT_FALSE(outcome.results.empty());
  for (const PlanResult& r : outcome.results) {
    EXPECT_EQ(r.candidate.tensor, 8);
    EXPECT_EQ(r.candidate.pipeline, 4);
    EXPECT_EQ(r.candidate.data, 32);
    EXPECT_EQ(r.candidate.sharding, training::DataSharding::zero1);
    EXPECT_EQ(r.candidate.recompute, training::Recompute::selective);
    EXPECT_EQ(r.candidate.precision, training::MatmulPrecision::bf16);
    EXPECT_EQ(r.candidate.micro_batch, 1);
  }
  // data x fsdp: FSDP over groups of fsdp data ranks (HSDP), dp their product.
  nlohmann::json sharded = llama_70b_transformer();
  sharded["data"] = 4;
  sharded["fsdp"] = 8;
  sharded["tensor"] = 8;
  sharded["pipeline"] = 4;
  const training::PlanOutcome hybrid = search(sharded, "hgx-h100", 1024);
  ASSERT_FALSE(hybrid.results.empty());
  for (const PlanResult& r : hybrid.results) {
    EXPECT_EQ(r.candidate.data, 32);
    EXPECT_EQ(r.candidate.fsdp, 8);
    EXPECT_EQ(r.candidate.sharding, training::DataSharding::hsdp);
  }
}

TEST(Plan, ATransformerWorkloadAsksNothingTheTrainingModelCannotHonour) {
  const std::pair<nlohmann::json, std::string> cases[] = {
      {{{"matmul_efficiency", 0.7}}, "workload.matmul_efficiency: 0.7, expected left out"},
      {{{"optimizer", "sgd"}}, "workload.optimizer: \"sgd\", expected adam"},
      {{{"optimizer_state_dtype", "bfloat16"}}, "workload.optimizer_state_dtype: \"bfloat16\", expected float32"},
      {{{"dtype", "float32"}}, "workload.dtype: \"float32\", expected bfloat16 or float16"},
      {{{"overlap", false}}, "workload.overlap: false, expected true or left out"},
      {{{"sequence_parallel", false}}, "workload.sequence_parallel: false, expected true or left out"},
      {{{"tensor", 3}}, "workload: heads: 64, expected a multiple of tensor (3)"},
      {{{"sequence_length", 8192}}, "workload.sequence_length: unknown field"},
      {{{"data", "all"}}, "workload.data: \"all\", expected a positive integer or \"auto\""},
  };
  for (const auto& [fields, expected] : cases) {
    nlohmann::json model = llama_70b_transformer();
    model.update(fields);
    const std::string file = model_file("transformer_bad", model);
    const CommandResult result =
        run_binary("plan --model " + file + " --machine hgx-h100 --devices 1024");
    EXPECT_EQ(result.exit_code, 2) << fields << "\n" << result.output;
    EXPECT_NE(result.output.find(file + ": " + expected), std::string::npos)
        << fields << "\n" << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << result.output;
  }
  // sequence_parallel false is no contradiction where tensor is held at 1.
  nlohmann::json untensored = llama_70b_transformer();
  untensored["sequence_parallel"] = false;
  untensored["tensor"] = 1;
  EXPECT_FALSE(search(untensored, "hgx-h100", 1024).results.empty());
}

TEST(Plan, HasHelp) {
  const CommandResult result = run_binary("plan --help");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("--devices"), std::string::npos) << result.output;
}

TEST(Plan, NothingFitsNamesTheSmallestMemoryNeeded) {
  const std::string message = error_of_search(llama_70b(), "hgx-h100", 2);
  // Two H100s hold no 70B model; the smallest layout still needs more than their 80 GB.
  const std::size_t needs = message.find(" layouts needs ");
  ASSERT_NE(needs, std::string::npos) << message;
  EXPECT_GT(std::stod(message.substr(needs + 15)), 80.0) << message;
}

TEST(Plan, MachinesCompareWithTheCostOfAMillionTokens) {
  nlohmann::json fp8 = llama_8b();
  fp8["precision"] = "fp8";  // a smaller search: the test is about the comparison
  const std::string model = model_file("llama8b", fp8);
  const CommandResult result =
      run_binary("plan --model " + model + " --machines hgx-h100:2.5,hgx-b200:5 --devices 64 "
                 "--top 3 --json " + (fs::temp_directory_path() / "spmdsim_plan_test" / "p.json").string());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("best layout per machine"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("$/M tok"), std::string::npos) << result.output;
  std::ifstream file(fs::temp_directory_path() / "spmdsim_plan_test" / "p.json");
  const nlohmann::json json = nlohmann::json::parse(file);
  ASSERT_EQ(json.at("plans").size(), 2u);
  EXPECT_EQ(json["plans"][1]["machine"], "hgx-b200");
  EXPECT_EQ(json["plans"][0]["price_per_gpu_hour"], 2.5);
  EXPECT_EQ(json["plans"][0]["results"].size(), json["plans"][0]["counts"]["ranked"]);
}

// In a comparison a machine or count where nothing fits says so in its section and the others
// are still compared; only where nothing fits anywhere is the command an error.
TEST(Plan, AComparisonGoesOnPastACountWhereNothingFits) {
  nlohmann::json fp8 = llama_70b();
  fp8["precision"] = "fp8";
  const std::string model = model_file("llama70b_fp8", fp8);
  const CommandResult some = run_binary("plan --model " + model +
                                        " --machine hgx-h100 --devices 2,64 --top 2");
  ASSERT_EQ(some.exit_code, 0) << some.output;
  EXPECT_NE(some.output.find("no layout fits on 2 x H100 SXM"), std::string::npos) << some.output;
  EXPECT_NE(some.output.find("best layout per machine"), std::string::npos) << some.output;
  const CommandResult none =
      run_binary("plan --model " + model + " --machine hgx-h100 --devices 1,2");
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_NE(none.output.find("no layout fits on 1 x H100 SXM"), std::string::npos)
      << none.output;
}

// The published layout as a candidate: the degrees, micro-batch, recompute and precision the
// row's job has.
bool is_published_layout(const training::Candidate& c, const training::TrainingJob& job) {
  const training::ParallelLayout& l = job.layout;
  const bool sharding_matches =
      l.fsdp > 1 ? c.fsdp == l.fsdp && (c.sharding == training::DataSharding::fsdp ||
                                        c.sharding == training::DataSharding::hsdp)
                 : (c.sharding == (l.distributed_optimizer ? training::DataSharding::zero1
                                                           : training::DataSharding::ddp));
  return c.tensor == l.tensor && c.pipeline == l.pipeline && c.virtual_stages == l.virtual_stages &&
         c.context == l.context && c.expert == l.expert && c.data == l.data &&
         c.micro_batch == job.batch.micro_batch_sequences && c.recompute == job.recompute &&
         c.precision == job.precision && sharding_matches;
}

TEST(Plan, PublishedLayoutsAreFoundWithTheirPredictedStep) {
  const CsvTable table = CsvTable::read_file(test_calibration::published_training_path());
  const std::vector<training::PublishedRun> runs = training::read_published_runs(table);
  const std::vector<training::TrainingPrediction> predictions = training::predict_runs(runs);
  const std::vector<std::string> chosen = {"MBRIDGE-024", "MBRIDGE-035", "NEMO2407-007",
                                           "NEMO2407-011", "NEMO2407-012", "MBRIDGE-013"};
  const std::vector<std::string> layout = {"dp",         "tp",        "pp",        "cp",
                                           "ep",         "vp",        "fsdp",      "zero_stage",
                                           "micro_batch", "recompute", "gpus_total"};
  int checked = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const training::PublishedRun& run = runs[i];
    if (std::find(chosen.begin(), chosen.end(), run.source_id) == chosen.end()) continue;
    ASSERT_TRUE(run.job.has_value()) << run.source_id;
    // The row as a model file: its fields less the layout.
    nlohmann::json model = {{"kind", "training"}};
    const CsvRecord& record = table.records()[i];
    for (const std::string& field : training::training_workload_fields()) {
      if (field == "kind" || field == "name" || !table.column_index(field)) continue;
      if (std::find(layout.begin(), layout.end(), field) != layout.end()) continue;
      const std::string& text = table.field(record, field);
      if (!text.empty()) model[field] = text;
    }
    const training::PlanOutcome outcome = search(model, "", run.devices);
    const auto found = std::find_if(outcome.results.begin(), outcome.results.end(),
                                    [&](const PlanResult& r) {
                                      return is_published_layout(r.candidate, *run.job);
                                    });
    ASSERT_NE(found, outcome.results.end()) << run.source_id << ": the published layout is not "
                                            << "among the ranked layouts";
    const double published_s = predictions[i].step->total_s();
    EXPECT_DOUBLE_EQ(found->step.total_s(), published_s) << run.source_id;
    const std::size_t rank = static_cast<std::size_t>(found - outcome.results.begin());
    EXPECT_TRUE(rank < 10 || outcome.results.front().step.total_s() < published_s)
        << run.source_id << " rank " << rank + 1;
    // docs/plan.md's table of published layouts, row by row.
    std::cout << fmt::format("| {} | {} | {:.3f} s | {} of {} | {} | {:.3f} s |\n", run.source_id,
                             training::candidate_text(found->candidate), published_s, rank + 1,
                             outcome.results.size(),
                             training::candidate_text(outcome.results.front().candidate),
                             outcome.results.front().step.total_s());
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(chosen.size()));
}

}  // namespace
}  // namespace spmd
