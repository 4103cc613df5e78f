#include "training/layout_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <exception>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>
#include <tuple>

#include "reference/check.h"
#include "reference/error.h"
#include "support/json_reader.h"
#include "support/name_table.h"
#include "training/published_run.h"
#include "training/transformer_as_training.h"

namespace spmd::training {
namespace {

constexpr NameTable<DataSharding, 5> kShardingNames = {{{DataSharding::ddp, "ddp"},
                                                        {DataSharding::zero1, "zero-1"},
                                                        {DataSharding::zero2, "zero-2"},
                                                        {DataSharding::fsdp, "fsdp"},
                                                        {DataSharding::hsdp, "hsdp"}}};
constexpr NameTable<PlanStatus, 3> kStatusNames = {{{PlanStatus::ranked, "ranked"},
                                                    {PlanStatus::does_not_fit, "does not fit"},
                                                    {PlanStatus::layout_error, "layout error"}}};
constexpr NameTable<Recompute, 5> kRecomputeNames = {{{Recompute::none, "none"},
                                                      {Recompute::selective, "selective"},
                                                      {Recompute::mlp, "mlp"},
                                                      {Recompute::full, "full"},
                                                      {Recompute::offload, "offload"}}};
constexpr NameTable<MatmulPrecision, 4> kPrecisionNames = {{{MatmulPrecision::bf16, "bf16"},
                                                           {MatmulPrecision::fp8, "fp8"},
                                                           {MatmulPrecision::mxfp8, "mxfp8"},
                                                           {MatmulPrecision::nvfp4, "nvfp4"}}};

// The layout fields a model file may hold; everything else in it describes the model, the batch,
// the machine or the software.
constexpr std::string_view kLayoutFields[] = {"dp", "tp", "pp", "cp", "ep", "vp", "fsdp",
                                              "zero_stage", "micro_batch", "recompute",
                                              "precision"};

// The largest tensor-parallel degree searched: a node's NVLink domain in the frameworks' recipes.
constexpr int kMostTensorParallel = 8;
constexpr int kContextDegrees[] = {1, 2, 4, 8, 16};
constexpr std::int64_t kMicroBatches[] = {1, 2, 4, 8};
constexpr Recompute kRecomputes[] = {Recompute::none, Recompute::selective, Recompute::full};

std::optional<std::int64_t> held_integer(const PlanModel& model, std::string_view field,
                                         std::int64_t minimum) {
  const auto at = model.fields.find(field);
  if (at == model.fields.end() || at->second.empty()) return std::nullopt;
  const std::string& text = at->second;
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < minimum ||
      value > (1 << 24)) {
    throw Error(fmt::format("{}: {} '{}': expected an integer from {} to {}", model.file, field,
                            text, minimum, 1 << 24));
  }
  return value;
}

std::optional<int> held_degree(const PlanModel& model, std::string_view field) {
  const std::optional<std::int64_t> value = held_integer(model, field, 1);
  if (!value) return std::nullopt;
  return static_cast<int>(*value);
}

std::string field_or_empty(const TrainingFields& fields, std::string_view name) {
  const auto at = fields.find(name);
  return at == fields.end() ? std::string() : at->second;
}

std::vector<MatmulPrecision> searched_precisions(const PlanSetting& s) {
  if (s.held.precision) return {*s.held.precision};
  std::vector<MatmulPrecision> precisions;
  for (const auto& [precision, name] : kPrecisionNames) {
    if (s.base.accelerator.peak_flops_per_s(precision) > 0) precisions.push_back(precision);
  }
  return precisions;
}

std::vector<int> searched_tensor_degrees(const PlanSetting& s) {
  if (s.held.tensor) return {*s.held.tensor};
  std::vector<int> degrees;
  const int most = std::min({kMostTensorParallel, s.base.devices_per_node, s.devices});
  for (int tp = 1; tp <= most; ++tp) {
    if (s.base.model.heads % tp == 0) degrees.push_back(tp);
  }
  return degrees;
}

// Megatron splits layers evenly over pp x vp model chunks, or counts the embedding and the loss
// as a layer each (account_for_embedding_in_pipeline_split, ..._loss_...): 126 layers on 128.
bool pipeline_split_allowed(std::int64_t layers, std::int64_t chunks) {
  return layers % chunks == 0 || (layers + 1) % chunks == 0 || (layers + 2) % chunks == 0;
}

std::vector<int> searched_pipeline_degrees(const PlanSetting& s) {
  if (s.held.pipeline) return {*s.held.pipeline};
  std::vector<int> degrees;
  const std::int64_t layers = s.base.model.layers;
  const std::int64_t most = std::min<std::int64_t>(layers + 2, s.devices);
  for (int pp = 1; pp <= most; ++pp) {
    if (pipeline_split_allowed(layers, pp)) degrees.push_back(pp);
  }
  return degrees;
}

std::vector<int> searched_virtual_stages(const PlanSetting& s, int pp) {
  if (s.held.virtual_stages) return {*s.held.virtual_stages};
  if (pp == 1) return {1};
  std::vector<int> stages;
  const std::int64_t layers = s.base.model.layers;
  for (int vp = 1; std::int64_t{pp} * vp <= layers + 2; ++vp) {
    if (pipeline_split_allowed(layers, std::int64_t{pp} * vp)) stages.push_back(vp);
  }
  return stages;
}

std::vector<int> searched_context_degrees(const PlanSetting& s) {
  if (s.held.context) return {*s.held.context};
  return {std::begin(kContextDegrees), std::end(kContextDegrees)};
}

std::vector<int> searched_expert_degrees(const PlanSetting& s) {
  if (s.held.expert) return {*s.held.expert};
  if (!s.base.model.moe) return {1};
  std::vector<int> degrees;
  for (std::int64_t ep = 1; ep <= s.base.model.moe->experts && ep <= s.devices; ep *= 2) {
    if (s.base.model.moe->experts % ep == 0) degrees.push_back(static_cast<int>(ep));
  }
  return degrees;
}

std::vector<DataSharding> searched_shardings(const PlanSetting& s) {
  const HeldLayout& h = s.held;
  if (h.zero_stage) {
    switch (*h.zero_stage) {
      case 0: return {DataSharding::ddp};
      case 1: return {DataSharding::zero1};
      case 2: return {DataSharding::zero2};
      default: return {h.fsdp && *h.fsdp > 1 ? DataSharding::hsdp : DataSharding::fsdp};
    }
  }
  if (h.fsdp) {
    if (*h.fsdp == 1) return {DataSharding::ddp, DataSharding::zero1};
    return {DataSharding::hsdp};  // a held degree: fsdp where it is all of dp (below)
  }
  return {DataSharding::ddp, DataSharding::zero1, DataSharding::fsdp, DataSharding::hsdp};
}

std::vector<std::int64_t> searched_micro_batches(const PlanSetting& s) {
  if (s.held.micro_batch) return {*s.held.micro_batch};
  // MaxText runs a replica's whole share as one micro-batch (0 here: set per dp below).
  if (s.base.software.framework == Framework::maxtext) return {0};
  return {std::begin(kMicroBatches), std::end(kMicroBatches)};
}

std::vector<Recompute> searched_recomputes(const PlanSetting& s) {
  if (s.held.recompute) return {*s.held.recompute};
  return {std::begin(kRecomputes), std::end(kRecomputes)};
}

// Why a candidate's degrees do not divide what they split, or empty where they do. Fills in the
// candidate's data degree, shard group and micro-batch size.
// Why a combination does not divide, or empty. The message is formatted only where `explain`
// (the first refusal is shown; formatting every one of a search's hundreds of thousands cost
// more than the rest of enumerating them).
std::string refusal(const PlanSetting& s, Candidate& c, bool explain) {
  auto refuse = [explain](std::string_view format, const auto&... args) {
    return explain ? fmt::vformat(format, fmt::make_format_args(args...)) : std::string("-");
  };
  const ModelShape& m = s.base.model;
  const std::int64_t model_parallel = std::int64_t{c.tensor} * c.pipeline * c.context;
  if (model_parallel > s.devices || s.devices % model_parallel != 0) {
    return refuse("tp x pp x cp {} x {} x {} = {}: expected a divisor of the devices ({})",
                       c.tensor, c.pipeline, c.context, model_parallel, s.devices);
  }
  c.data = static_cast<int>(s.devices / model_parallel);
  if (s.held.data && *s.held.data != c.data) {
    return refuse("dp {} (the devices over tp x pp x cp {} x {} x {}): expected the model "
                       "file's dp {}",
                       c.data, c.tensor, c.pipeline, c.context, *s.held.data);
  }
  if (c.pipeline == 1 && c.virtual_stages > 1) {
    return refuse("vp {}: expected 1 without a pipeline (pp 1)", c.virtual_stages);
  }
  const std::int64_t chunks = std::int64_t{c.pipeline} * c.virtual_stages;
  if (!pipeline_split_allowed(m.layers, chunks)) {
    return refuse("pp x vp {} x {} = {}: expected a divisor of layers, layers + 1 or "
                       "layers + 2 ({}, {}, {})",
                       c.pipeline, c.virtual_stages, chunks, m.layers, m.layers + 1,
                       m.layers + 2);
  }
  if (s.base.batch.sequence % c.context != 0) {
    return refuse("cp {}: expected a divisor of seq_len ({})", c.context,
                       s.base.batch.sequence);
  }
  if (m.moe) {
    const std::int64_t room = std::int64_t{c.data} * c.context * c.tensor;
    if (m.moe->experts % c.expert != 0 || room % c.expert != 0) {
      return refuse("ep {}: expected a divisor of moe_experts ({}) and of dp x cp x tp ({})",
                         c.expert, m.moe->experts, room);
    }
  }
  const int node_group = std::max(1, s.base.devices_per_node / (c.tensor * c.context));
  switch (c.sharding) {
    case DataSharding::ddp: c.fsdp = 1; break;
    case DataSharding::zero1:
      c.fsdp = 1;
      if (std::int64_t{c.data} * c.context < 2) {
        return "distributed optimizer over dp x cp 1: expected at least 2 ranks to shard over";
      }
      break;
    case DataSharding::zero2:
    case DataSharding::fsdp:
      c.fsdp = c.data;
      if (c.data < 2) return "fsdp over dp 1: expected at least 2 ranks to shard over";
      break;
    case DataSharding::hsdp: {
      const int group = s.held.fsdp ? *s.held.fsdp : node_group;
      c.fsdp = group;
      if (group == c.data && s.held.fsdp) {
        c.sharding = DataSharding::fsdp;  // the held degree is every data rank
      } else if (group < 2 || group >= c.data || c.data % group != 0) {
        return refuse("hsdp shard group {} (a node's data ranks): expected at least 2, "
                           "below dp ({}) and a divisor of it",
                           group, c.data);
      }
      break;
    }
  }
  const std::int64_t global = s.base.batch.global_sequences;
  if (global % c.data != 0) {
    return refuse("dp {}: expected a divisor of global_batch_seqs ({})", c.data, global);
  }
  if (c.micro_batch == 0) c.micro_batch = global / c.data;  // MaxText: the whole share
  if (s.base.software.framework == Framework::torchtitan && c.pipeline > 1 &&
      c.micro_batch != 1) {
    return refuse("micro_batch {}: expected 1 under torchtitan's pipelines (micro-batches "
                       "of one sequence)",
                       c.micro_batch);
  }
  if ((global / c.data) % c.micro_batch != 0) {
    return refuse("micro_batch {}: expected a divisor of global_batch_seqs / dp ({} / {})",
                       c.micro_batch, global, c.data);
  }
  return {};
}

PlanResult evaluate_one(const PlanSetting& s, const Candidate& c, std::int64_t index) {
  PlanResult r;
  r.index = index;
  r.candidate = c;
  TrainingJob job;
  try {
    job = candidate_job(s, c);
    check_training_job(job, "layout");
  } catch (const Error& e) {
    r.status = PlanStatus::layout_error;
    r.layout_error = e.what();
    return r;
  }
  r.memory = peak_memory(job);
  if (r.memory.total_bytes() > job.accelerator.memory_bytes) {
    r.status = PlanStatus::does_not_fit;
    return r;
  }
  r.status = PlanStatus::ranked;
  r.step = predict_step(job, s.fabric);
  const double step_s = r.step.total_s();
  const double tokens =
      static_cast<double>(job.batch.global_sequences) * static_cast<double>(job.batch.sequence);
  r.tokens_per_s_per_gpu = tokens / step_s / s.devices;
  r.model_flops_utilization = r.tokens_per_s_per_gpu *
                              model_flops_per_token(job.model, job.batch.sequence) /
                              job.accelerator.peak_flops_per_s(job.precision);
  r.range = step_range(accelerator_family(job.accelerator), step_s);
  return r;
}

auto layout_key(const Candidate& c) {
  return std::make_tuple(static_cast<int>(c.precision), c.tensor, c.pipeline, c.virtual_stages,
                         c.context, c.expert, c.data, static_cast<int>(c.sharding), c.fsdp,
                         c.micro_batch, static_cast<int>(c.recompute));
}

struct StepPart {
  std::string_view name;
  double StepTime::*seconds;
};
constexpr StepPart kStepParts[] = {
    {"compute", &StepTime::compute_s},
    {"tensor parallel", &StepTime::tensor_parallel_s},
    {"context parallel", &StepTime::context_parallel_s},
    {"expert parallel", &StepTime::expert_parallel_s},
    {"pipeline bubble", &StepTime::pipeline_bubble_s},
    {"pipeline sends", &StepTime::pipeline_transfer_s},
    {"data parallel", &StepTime::data_parallel_s},
    {"activation offload", &StepTime::activation_offload_s},
    {"optimizer", &StepTime::optimizer_s}};

// "pp 4 vp 10" where `a` and `b` differ.
std::string differing_fields(const Candidate& a, const Candidate& b) {
  std::vector<std::string> parts;
  auto add = [&](std::string_view name, auto x, auto y) {
    if (x != y) parts.push_back(fmt::format("{} {}", name, x));
  };
  if (a.precision != b.precision) parts.emplace_back(precision_name(a.precision));
  add("tp", a.tensor, b.tensor);
  add("pp", a.pipeline, b.pipeline);
  add("vp", a.virtual_stages, b.virtual_stages);
  add("cp", a.context, b.context);
  add("ep", a.expert, b.expert);
  add("dp", a.data, b.data);
  if (a.sharding != b.sharding || a.fsdp != b.fsdp) {
    parts.push_back(a.sharding == DataSharding::hsdp
                        ? fmt::format("hsdp {}", a.fsdp)
                        : std::string(data_sharding_name(a.sharding)));
  }
  add("mb", a.micro_batch, b.micro_batch);
  if (a.recompute != b.recompute) {
    parts.push_back(fmt::format("recompute {}", recompute_name(a.recompute)));
  }
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : " ") + part;
  return text;
}

}  // namespace

std::string_view data_sharding_name(DataSharding sharding) {
  return name_in(kShardingNames, sharding);
}

std::string candidate_text(const Candidate& c) {
  const std::string sharding = c.sharding == DataSharding::hsdp
                                   ? fmt::format("hsdp {}", c.fsdp)
                                   : std::string(data_sharding_name(c.sharding));
  return fmt::format("{} tp {} pp {} vp {} cp {} ep {} dp {} {} mb {} recompute {}",
                     precision_name(c.precision), c.tensor, c.pipeline, c.virtual_stages,
                     c.context, c.expert, c.data, sharding, c.micro_batch,
                     recompute_name(c.recompute));
}

bool layout_before(const Candidate& a, const Candidate& b) {
  return layout_key(a) < layout_key(b);
}

PlanModel plan_model_from_json(const nlohmann::json& json, const std::string& file_name) {
  if (json.is_object() && json.value("kind", nlohmann::json()) == "transformer") {
    return plan_model_from_json(training_workload_of_transformer(json, file_name), file_name);
  }
  PlanModel model;
  model.file = file_name;
  model.fields = training_fields_from_json(json, file_name);
  HeldLayout& h = model.held;
  h.data = held_degree(model, "dp");
  h.tensor = held_degree(model, "tp");
  h.pipeline = held_degree(model, "pp");
  h.context = held_degree(model, "cp");
  h.expert = held_degree(model, "ep");
  h.virtual_stages = held_degree(model, "vp");
  h.fsdp = held_degree(model, "fsdp");
  if (const std::optional<std::int64_t> zero = held_integer(model, "zero_stage", 0)) {
    if (*zero > 3) {
      throw Error(fmt::format("{}: zero_stage '{}': expected 0, 1, 2 or 3", file_name, *zero));
    }
    h.zero_stage = static_cast<int>(*zero);
  }
  h.micro_batch = held_integer(model, "micro_batch", 1);
  const std::string recompute = field_or_empty(model.fields, "recompute");
  if (!recompute.empty()) h.recompute = recompute_from_text(recompute, file_name);
  const std::string precision = field_or_empty(model.fields, "precision");
  if (!precision.empty()) {
    try {
      h.precision = precision_from_description(precision);
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", file_name, e.what()));
    }
  }
  if (h.fsdp && *h.fsdp > 1 && h.zero_stage && *h.zero_stage < 3) {
    throw Error(fmt::format("{}: fsdp {}: expected 1 (or no fsdp) with zero_stage {}", file_name,
                            *h.fsdp, *h.zero_stage));
  }
  return model;
}

PlanModel load_plan_model(const std::string& path) {
  return plan_model_from_json(parse_json_file(path, "a model file"), path);
}

PlanSetting plan_setting(const PlanModel& model, const std::string& gpu_description,
                         int devices) {
  PlanSetting s;
  s.devices = devices;
  s.held = model.held;
  s.where = model.file;
  if (const std::optional<std::int64_t> total = held_integer(model, "gpus_total", 1)) {
    if (*total != devices) {
      throw Error(fmt::format("{}: gpus_total {}: expected the device count searched ({}) or "
                              "no gpus_total",
                              model.file, *total, devices));
    }
  }
  const std::string gpu =
      gpu_description.empty() ? field_or_empty(model.fields, "gpu") : gpu_description;
  if (gpu.empty()) {
    throw Error(fmt::format("{}: gpu '': expected a gpu field or a machine preset (--machine)",
                            model.file));
  }
  // The held degrees together must divide the devices (all four: be them).
  const HeldLayout& h = model.held;
  const std::int64_t held_product = std::int64_t{h.data.value_or(1)} * h.tensor.value_or(1) *
                                    h.pipeline.value_or(1) * h.context.value_or(1);
  if (h.data && h.tensor && h.pipeline && h.context && held_product != devices) {
    throw Error(fmt::format("{}: dp {}: expected dp x tp x pp x cp = the devices ({}), got {} x "
                            "{} x {} x {} = {}",
                            model.file, *h.data, devices, *h.data, *h.tensor, *h.pipeline,
                            *h.context, held_product));
  }
  if (held_product > devices || devices % held_product != 0) {
    throw Error(fmt::format("{}: dp x tp x pp x cp held at {} x {} x {} x {} = {}: expected a "
                            "divisor of the devices ({})",
                            model.file, h.data.value_or(1), h.tensor.value_or(1),
                            h.pipeline.value_or(1), h.context.value_or(1), held_product,
                            devices));
  }
  // The job on one device: the model, the batch, the software and the accelerator as the
  // published columns read them; the layout comes from each candidate.
  const FieldLookup lookup = [&](std::string_view column) -> std::string {
    if (column == "gpu") return gpu;
    if (column == "gpus_total") return "1";
    if (column == "micro_batch") return "1";
    if (column == "recompute") return "none";
    if (column == "precision") return "bf16";
    if (column == "measured_step_s" || column == "measured_tokens_per_s_per_gpu") return "";
    for (std::string_view layout : kLayoutFields) {
      if (column == layout) return "";
    }
    return field_or_empty(model.fields, column);
  };
  const PublishedRun run = published_run(lookup, model.file, 0);
  if (!run.job) {
    throw Error(fmt::format("{}: cannot be planned: {}", model.file, run.not_predicted));
  }
  s.base = *run.job;
  if (h.precision) require_precision(s.base.accelerator, *h.precision, model.file);
  s.fabric = fabric_of(s.base.accelerator);
  return s;
}

CandidateList enumerate_candidates(const PlanSetting& s) {
  CandidateList list;
  const std::vector<int> tensors = searched_tensor_degrees(s);
  const std::vector<int> pipelines = searched_pipeline_degrees(s);
  const std::vector<int> contexts = searched_context_degrees(s);
  const std::vector<int> experts = searched_expert_degrees(s);
  const std::vector<DataSharding> shardings = searched_shardings(s);
  const std::vector<std::int64_t> micro_batches = searched_micro_batches(s);
  const std::vector<Recompute> recomputes = searched_recomputes(s);
  for (MatmulPrecision precision : searched_precisions(s)) {
    for (int tp : tensors) {
      for (int pp : pipelines) {
        for (int vp : searched_virtual_stages(s, pp)) {
          for (int cp : contexts) {
            for (int ep : experts) {
              for (DataSharding sharding : shardings) {
                for (std::int64_t micro_batch : micro_batches) {
                  for (Recompute recompute : recomputes) {
                    ++list.considered;
                    Candidate c{.precision = precision, .tensor = tp, .pipeline = pp,
                                .virtual_stages = vp, .context = cp, .expert = ep,
                                .sharding = sharding, .micro_batch = micro_batch,
                                .recompute = recompute};
                    std::string why = refusal(s, c, list.first_not_dividing.empty());
                    if (why.empty()) {
                      list.candidates.push_back(c);
                      continue;
                    }
                    ++list.not_dividing;
                    if (list.first_not_dividing.empty()) list.first_not_dividing = std::move(why);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return list;
}

TrainingJob candidate_job(const PlanSetting& s, const Candidate& c) {
  TrainingJob job = s.base;
  ParallelLayout& l = job.layout;
  l.devices = s.devices;
  l.data = c.data;
  l.tensor = c.tensor;
  l.pipeline = c.pipeline;
  l.virtual_stages = c.virtual_stages;
  l.context = c.context;
  l.expert = c.expert;
  l.fsdp = c.fsdp;
  l.distributed_optimizer = c.sharding != DataSharding::ddp;
  // ZeRO-2 (SHARD_GRAD_OP) keeps the gathered weights to the backward; so does torchtitan under a
  // pipeline (published_run.cc reads a row the same way).
  l.reshard_after_forward =
      c.sharding != DataSharding::zero2 &&
      !(job.software.framework == Framework::torchtitan && c.pipeline > 1);
  job.batch.micro_batch_sequences = c.micro_batch;
  job.recompute = c.recompute;
  job.precision = c.precision;
  return job;
}

namespace {

// candidates first, first + stride, ... (count of them) on `threads` threads, in that order.
std::vector<PlanResult> evaluate_every(const PlanSetting& setting,
                                      const std::vector<Candidate>& candidates, std::size_t first,
                                      std::size_t stride, std::size_t count, unsigned threads) {
  std::vector<PlanResult> results(count);
  std::vector<std::exception_ptr> failures(count);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
      const std::size_t index = first + i * stride;
      try {
        results[i] = evaluate_one(setting, candidates[index], static_cast<std::int64_t>(index));
      } catch (...) {
        failures[i] = std::current_exception();
      }
    }
  };
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t workers = std::min<std::size_t>(threads, std::max<std::size_t>(count, 1));
  {
    std::vector<std::jthread> pool;
    for (std::size_t t = 1; t < workers; ++t) pool.emplace_back(work);
    work();
  }  // the jthreads join here
  // The first failure by index, whatever thread met it first.
  for (const std::exception_ptr& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
  return results;
}

}  // namespace

std::vector<PlanResult> evaluate_candidates(const PlanSetting& setting,
                                            const std::vector<Candidate>& candidates,
                                            std::size_t begin, std::size_t end,
                                            unsigned threads) {
  end = std::min(end, candidates.size());
  begin = std::min(begin, end);
  return evaluate_every(setting, candidates, begin, 1, end - begin, threads);
}

std::vector<PlanResult> evaluate_candidates_strided(const PlanSetting& setting,
                                                    const std::vector<Candidate>& candidates,
                                                    std::size_t first, std::size_t stride,
                                                    unsigned threads) {
  SPMD_CHECK(stride > 0, "a stride of 0 candidates");
  const std::size_t count =
      first < candidates.size() ? (candidates.size() - first + stride - 1) / stride : 0;
  return evaluate_every(setting, candidates, first, stride, count, threads);
}

namespace {

// rank_results' order.
bool ranks_before(const PlanResult& a, const PlanResult& b) {
  if (a.status != b.status) return a.status < b.status;
  if (a.status == PlanStatus::ranked && a.tokens_per_s_per_gpu != b.tokens_per_s_per_gpu) {
    return a.tokens_per_s_per_gpu > b.tokens_per_s_per_gpu;
  }
  if (a.status == PlanStatus::does_not_fit && a.memory.total_bytes() != b.memory.total_bytes()) {
    return a.memory.total_bytes() < b.memory.total_bytes();
  }
  return layout_before(a.candidate, b.candidate);
}

// The unranked results require_ranked can name, of `results` (ShareSummary's rule).
struct NamedUnranked {
  const PlanResult* smallest_unfitting = nullptr;
  const PlanResult* first_refused = nullptr;
};

template <typename Results>
NamedUnranked named_unranked(const Results& results) {
  NamedUnranked named;
  for (const PlanResult& r : results) {
    const PlanResult* smallest = named.smallest_unfitting;
    if (r.status == PlanStatus::does_not_fit &&
        (smallest == nullptr || ranks_before(r, *smallest))) {
      named.smallest_unfitting = &r;
    }
    if (r.status == PlanStatus::layout_error &&
        (named.first_refused == nullptr || r.index < named.first_refused->index)) {
      named.first_refused = &r;
    }
  }
  return named;
}

std::optional<PlanResult> copy_of(const PlanResult* result) {
  return result ? std::optional<PlanResult>(*result) : std::nullopt;
}

}  // namespace

void rank_results(std::vector<PlanResult>& results) {
  std::sort(results.begin(), results.end(), ranks_before);
}

namespace {

// Drops the ranked results (in rank order) after those with the best `kept.best_speeds`
// tokens/s values.
void keep(std::vector<PlanResult>& ranked, const KeptResults& kept) {
  if (!kept.best_speeds) return;
  std::size_t speeds = 0;
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    if (i == 0 || ranked[i].tokens_per_s_per_gpu != ranked[i - 1].tokens_per_s_per_gpu) {
      if (speeds == *kept.best_speeds) {
        ranked.erase(ranked.begin() + static_cast<std::ptrdiff_t>(i), ranked.end());
        return;
      }
      ++speeds;
    }
  }
}

}  // namespace

ShareSummary summarize_share(std::vector<PlanResult> results, const KeptResults& kept) {
  ShareSummary summary;
  const NamedUnranked named = named_unranked(results);
  summary.smallest_unfitting = copy_of(named.smallest_unfitting);
  summary.first_refused = copy_of(named.first_refused);
  summary.not_fitting = std::ranges::count(results, PlanStatus::does_not_fit, &PlanResult::status);
  summary.layout_errors =
      std::ranges::count(results, PlanStatus::layout_error, &PlanResult::status);
  std::erase_if(results, [](const PlanResult& r) { return r.status != PlanStatus::ranked; });
  summary.ranked_count = static_cast<std::int64_t>(results.size());
  rank_results(results);
  keep(results, kept);
  summary.ranked = std::move(results);
  return summary;
}

ShareSummary combine_shares(std::vector<ShareSummary> shares, const KeptResults& kept) {
  ShareSummary all;
  std::vector<PlanResult> named;  // every share's named results: the same rule picks from them
  std::size_t ranked = 0;
  for (const ShareSummary& share : shares) ranked += share.ranked.size();
  for (ShareSummary& share : shares) {
    all.ranked_count += share.ranked_count;
    all.not_fitting += share.not_fitting;
    all.layout_errors += share.layout_errors;
    for (std::optional<PlanResult>* r : {&share.smallest_unfitting, &share.first_refused}) {
      if (*r) named.push_back(std::move(**r));
    }
    if (all.ranked.empty()) {
      all.ranked = std::move(share.ranked);
      all.ranked.reserve(ranked);
      continue;
    }
    // Each share is in rank order: merge rather than sort again.
    const auto middle = static_cast<std::ptrdiff_t>(all.ranked.size());
    std::ranges::move(share.ranked, std::back_inserter(all.ranked));
    std::inplace_merge(all.ranked.begin(), all.ranked.begin() + middle, all.ranked.end(),
                       ranks_before);
  }
  // Each share kept at least the whole's best speeds (its own best are no worse); the rest goes.
  keep(all.ranked, kept);
  const NamedUnranked picked = named_unranked(named);
  all.smallest_unfitting = copy_of(picked.smallest_unfitting);
  all.first_refused = copy_of(picked.first_refused);
  return all;
}

PlanCounts count_results(const CandidateList& list, const ShareSummary& summary) {
  return PlanCounts{.considered = list.considered,
                    .not_dividing = list.not_dividing,
                    .layout_errors = summary.layout_errors,
                    .not_fitting = summary.not_fitting,
                    .ranked = summary.ranked_count};
}

void require_ranked(const PlanSetting& s, const CandidateList& list,
                    const ShareSummary& summary) {
  if (summary.ranked_count > 0) return;
  const Accelerator& a = s.base.accelerator;
  if (const std::optional<PlanResult>& smallest = summary.smallest_unfitting) {
    throw Error(fmt::format(
        "{}: no layout fits on {} x {} ({:.1f} GB each): devices {}: expected more devices or a "
        "smaller model; the smallest of {} layouts needs {:.1f} GB ({}: {})",
        s.where, s.devices, a.name, a.memory_bytes / 1e9, s.devices, list.candidates.size(),
        smallest->memory.total_bytes() / 1e9, candidate_text(smallest->candidate),
        smallest->memory.parts_text()));
  }
  if (summary.first_refused) {
    throw Error(fmt::format("{}: every layout is refused on {} devices, the first: {}", s.where,
                            s.devices, summary.first_refused->layout_error));
  }
  const HeldLayout& h = s.held;
  const bool holds_layout = h.tensor || h.pipeline || h.virtual_stages || h.context ||
                            h.expert || h.data || h.fsdp || h.zero_stage || h.micro_batch;
  if (holds_layout) {
    throw Error(fmt::format("{}: the layout fields it holds leave no layout on {} devices; of {} "
                            "layouts the first is refused: {}",
                            s.where, s.devices, list.considered, list.first_not_dividing));
  }
  throw Error(fmt::format("{}: devices {}: expected a count some layout divides; of {} layouts "
                          "the first is refused: {}",
                          s.where, s.devices, list.considered, list.first_not_dividing));
}

std::vector<EquivalentRun> equivalent_runs(const std::vector<PlanResult>& ranked,
                                           std::size_t most) {
  std::vector<EquivalentRun> runs;
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    if (!runs.empty()) {
      const PlanResult& first = ranked[runs.back().first];
      if (ranked[i].step.total_s() == first.step.total_s() &&
          ranked[i].memory.total_bytes() == first.memory.total_bytes()) {
        ++runs.back().size;
        continue;
      }
    }
    if (runs.size() == most) break;
    runs.push_back(EquivalentRun{.first = i});
  }
  return runs;
}

std::string why_best_beats_next(const PlanResult& best, const PlanResult& next) {
  const double gain_s = next.step.total_s() - best.step.total_s();
  // The parts that differ most, largest first (a stable sort keeps the parts' order on ties).
  std::vector<std::pair<double, std::string_view>> differences;
  for (const StepPart& part : kStepParts) {
    const double d = best.step.*part.seconds - next.step.*part.seconds;
    if (std::abs(d) >= 0.0005) differences.emplace_back(d, part.name);
  }
  std::stable_sort(differences.begin(), differences.end(),
                   [](const auto& a, const auto& b) { return std::abs(a.first) > std::abs(b.first); });
  if (differences.size() > 3) differences.resize(3);
  std::string parts;
  for (const auto& [d, name] : differences) {
    parts += fmt::format("{}{} {:.3f} s {}", parts.empty() ? "" : ", ", name, std::abs(d),
                         d < 0 ? "less" : "more");
  }
  const std::string layout = fmt::format("{} where #2 has {}",
                                         differing_fields(best.candidate, next.candidate),
                                         differing_fields(next.candidate, best.candidate));
  if (gain_s <= 0) {
    return fmt::format("#1 and #2 tie at {:.3f} s a step; #1 comes first in layout order ({})",
                       best.step.total_s(), layout);
  }
  return fmt::format("#1 is {:.3f} s ({:.1f}%) a step faster than #2{}{}: it has {}", gain_s,
                     100 * gain_s / next.step.total_s(), parts.empty() ? "" : ": ", parts,
                     layout);
}

std::size_t SearchShare::first() const { return 0; }

std::size_t SearchShare::stride() const { return 1; }

std::optional<ShareSummary> SearchShare::gather(ShareSummary local, const KeptResults&) const {
  return local;
}

PlanOutcome search_layouts(const PlanSetting& setting, unsigned threads, const KeptResults& kept) {
  return *search_layouts(setting, threads, kept, SearchShare{});
}

std::optional<PlanOutcome> search_layouts(const PlanSetting& setting, unsigned threads,
                                          const KeptResults& kept, const SearchShare& share) {
  PlanOutcome outcome;
  outcome.list = enumerate_candidates(setting);
  std::optional<ShareSummary> gathered = share.gather(
      summarize_share(evaluate_candidates_strided(setting, outcome.list.candidates,
                                                  share.first(), share.stride(), threads),
                      kept),
      kept);
  if (!gathered) return std::nullopt;
  outcome.counts = count_results(outcome.list, *gathered);
  require_ranked(setting, outcome.list, *gathered);
  outcome.results = std::move(gathered->ranked);
  return outcome;
}

void to_json(nlohmann::json& json, const Candidate& c) {
  json = nlohmann::json{{"precision", precision_name(c.precision)},
                        {"tp", c.tensor},
                        {"pp", c.pipeline},
                        {"vp", c.virtual_stages},
                        {"cp", c.context},
                        {"ep", c.expert},
                        {"dp", c.data},
                        {"sharding", data_sharding_name(c.sharding)},
                        {"fsdp", c.fsdp},
                        {"micro_batch", c.micro_batch},
                        {"recompute", recompute_name(c.recompute)}};
}

void from_json(const nlohmann::json& json, Candidate& c) {
  c.precision = value_in(kPrecisionNames, json.at("precision").get<std::string>(), "precision");
  c.tensor = json.at("tp").get<int>();
  c.pipeline = json.at("pp").get<int>();
  c.virtual_stages = json.at("vp").get<int>();
  c.context = json.at("cp").get<int>();
  c.expert = json.at("ep").get<int>();
  c.data = json.at("dp").get<int>();
  c.sharding = value_in(kShardingNames, json.at("sharding").get<std::string>(), "sharding");
  c.fsdp = json.at("fsdp").get<int>();
  c.micro_batch = json.at("micro_batch").get<std::int64_t>();
  c.recompute = value_in(kRecomputeNames, json.at("recompute").get<std::string>(), "recompute");
}

void to_json(nlohmann::json& json, const PlanResult& r) {
  const TrainingMemory& m = r.memory;
  const StepTime& s = r.step;
  json = nlohmann::json{
      {"index", r.index},
      {"layout", r.candidate},
      {"status", name_in(kStatusNames, r.status)},
      {"layout_error", r.layout_error},
      {"memory_bytes",
       {{"weights", m.weights_bytes}, {"gradients", m.gradients_bytes},
        {"optimizer", m.optimizer_bytes}, {"gathered_weights", m.gathered_weights_bytes},
        {"activations", m.activations_bytes}, {"logits", m.logits_bytes},
        {"runtime", m.runtime_bytes}, {"allocator_slack", m.allocator_slack_bytes},
        {"total", m.total_bytes()}}},
      {"step_s",
       {{"compute", s.compute_s}, {"tensor_parallel", s.tensor_parallel_s},
        {"context_parallel", s.context_parallel_s}, {"expert_parallel", s.expert_parallel_s},
        {"pipeline_bubble", s.pipeline_bubble_s}, {"pipeline_transfer", s.pipeline_transfer_s},
        {"data_parallel", s.data_parallel_s}, {"activation_offload", s.activation_offload_s},
        {"optimizer", s.optimizer_s}, {"total", s.total_s()},
        {"exposed_communication", s.communication_s()}}},
      {"range_s", {{"low", r.range.low}, {"high", r.range.high}}},
      {"tokens_per_s_per_gpu", r.tokens_per_s_per_gpu},
      {"mfu", r.model_flops_utilization}};
}

void from_json(const nlohmann::json& json, PlanResult& r) {
  r.index = json.at("index").get<std::int64_t>();
  r.candidate = json.at("layout").get<Candidate>();
  r.status = value_in(kStatusNames, json.at("status").get<std::string>(), "status");
  r.layout_error = json.at("layout_error").get<std::string>();
  const nlohmann::json& m = json.at("memory_bytes");
  r.memory = TrainingMemory{.weights_bytes = m.at("weights").get<double>(),
                            .gradients_bytes = m.at("gradients").get<double>(),
                            .optimizer_bytes = m.at("optimizer").get<double>(),
                            .gathered_weights_bytes = m.at("gathered_weights").get<double>(),
                            .activations_bytes = m.at("activations").get<double>(),
                            .logits_bytes = m.at("logits").get<double>(),
                            .runtime_bytes = m.at("runtime").get<double>(),
                            .allocator_slack_bytes = m.at("allocator_slack").get<double>()};
  const nlohmann::json& s = json.at("step_s");
  r.step = StepTime{.compute_s = s.at("compute").get<double>(),
                    .tensor_parallel_s = s.at("tensor_parallel").get<double>(),
                    .context_parallel_s = s.at("context_parallel").get<double>(),
                    .expert_parallel_s = s.at("expert_parallel").get<double>(),
                    .pipeline_bubble_s = s.at("pipeline_bubble").get<double>(),
                    .pipeline_transfer_s = s.at("pipeline_transfer").get<double>(),
                    .data_parallel_s = s.at("data_parallel").get<double>(),
                    .activation_offload_s = s.at("activation_offload").get<double>(),
                    .optimizer_s = s.at("optimizer").get<double>()};
  r.range = StepRange{.low = json.at("range_s").at("low").get<double>(),
                      .high = json.at("range_s").at("high").get<double>()};
  r.tokens_per_s_per_gpu = json.at("tokens_per_s_per_gpu").get<double>();
  r.model_flops_utilization = json.at("mfu").get<double>();
}

}  // namespace spmd::training
