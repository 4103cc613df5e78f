#include "training/published_run.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "reference/error.h"
#include "training/model_catalogue.h"
#include "training/training_memory.h"

namespace spmd::training {
namespace {

constexpr std::string_view kExpected =
    "the published-steps columns (docs/validation.md, \"Training steps\")";

class RowReader {
 public:
  RowReader(const FieldLookup& field, std::string where)
      : field_(field), where_(std::move(where)) {}

  std::string text(std::string_view column) const { return field_(column); }
  bool empty(std::string_view column) const { return text(column).empty(); }

  // An integer of at least `minimum`, or `fallback` when the field is empty.
  std::int64_t integer(std::string_view column, std::int64_t fallback,
                       std::int64_t minimum = 1) const {
    const std::string value = text(column);
    if (value.empty()) return fallback;
    std::int64_t parsed = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (error != std::errc() || end != value.data() + value.size() || parsed < minimum) {
      throw Error(fmt::format("{}: {} '{}': expected an integer of at least {}", where_, column,
                              value, minimum));
    }
    return parsed;
  }
  int degree(std::string_view column, int fallback = 1) const {
    const std::int64_t value = integer(column, fallback);
    if (value > (1 << 24)) {
      throw Error(fmt::format("{}: {} '{}': expected at most {}", where_, column, value, 1 << 24));
    }
    return static_cast<int>(value);
  }
  std::optional<double> positive(std::string_view column) const {
    const std::string value = text(column);
    if (value.empty()) return std::nullopt;
    double parsed = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (error != std::errc() || end != value.data() + value.size() || !(parsed > 0) ||
        !std::isfinite(parsed)) {
      throw Error(fmt::format("{}: {} '{}': expected a positive number", where_, column, value));
    }
    return parsed;
  }
  const std::string& where() const { return where_; }

  // What `read` makes of a column's words; its spmd::Error ("precision 'int4': expected ...")
  // gets the row's place in front.
  template <typename Read>
  auto described(std::string_view column, Read read) const {
    try {
      return read(text(column));
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", where_, e.what()));
    }
  }

 private:
  const FieldLookup& field_;
  std::string where_;
};

Recompute recompute_of(const RowReader& row, Framework framework) {
  const std::string text = row.text("recompute");
  if (text.empty()) {
    // Defaults: Megatron recomputes nothing unless told; torchtitan's default is selective;
    // llm-foundry's yamls and MaxText's base.yml checkpoint whole layers.
    switch (framework) {
      case Framework::torchtitan: return Recompute::selective;
      case Framework::llm_foundry:
      case Framework::maxtext: return Recompute::full;
      default: return Recompute::none;
    }
  }
  return recompute_from_text(text, row.where());
}

// The row's cp_comm_type, or else the framework's default: PyTorch's context_parallel gathers
// (rotate method "allgather") under torchtitan, Megatron passes a ring ("p2p").
ParallelLayout::ContextExchange context_exchange_of(const RowReader& row, Framework framework) {
  using Exchange = ParallelLayout::ContextExchange;
  const std::string text = row.text("cp_comm_type");
  if (text.empty()) return framework == Framework::torchtitan ? Exchange::all_gather : Exchange::ring;
  if (text == "p2p" || text == "ring") return Exchange::ring;
  if (text == "allgather" || text == "all_gather") return Exchange::all_gather;
  if (text == "a2a" || text == "all_to_all" || text == "ulysses") return Exchange::all_to_all;
  throw Error(fmt::format("{}: cp_comm_type '{}': expected p2p (ring), allgather (PyTorch's "
                          "context_parallel) or a2a (all_to_all, Ulysses)",
                          row.where(), text));
}

ModelShape model_of(const RowReader& row) {
  const ModelFamily family = model_family(row.text("model"));
  ModelShape model;
  model.layers = row.integer("layers", 0);
  model.d_model = row.integer("d_model", 0);
  model.heads = row.integer("heads", 0);
  model.kv_heads = row.integer("kv_heads", model.heads);
  model.head_dim = family.head_dim > 0 ? family.head_dim
                                       : (model.heads > 0 ? model.d_model / model.heads : 0);
  // GPT-style tables leave out d_ff: 4·d_model.
  model.d_ff = row.integer("d_ff", 4 * model.d_model);
  // The family's vocabulary, else GPT-2's padded to a multiple of 1024 (Megatron's GPT runs).
  model.vocabulary = row.integer("vocabulary", family.vocabulary > 0 ? family.vocabulary : 51200);
  model.gated_mlp = family.gated_mlp;
  model.latent_attention = family.latent_attention;
  model.sliding_window = family.sliding_window;
  model.sliding_window_layer_share = family.sliding_window_layer_share;
  const std::int64_t experts = row.integer("moe_experts", 0, 0);
  if (experts > 0) {
    model.moe = MixtureOfExperts{.experts = experts,
                                 .top_k = row.integer("moe_topk", 1),
                                 .expert_d_ff = model.d_ff,
                                 .shared_experts = family.shared_experts,
                                 .dense_layers = family.dense_layers,
                                 .dense_d_ff = family.dense_d_ff};
  }
  return model;
}

// Published recipes are tuned to fit: where a row does not say what it recomputes, the
// framework's default, or else the least recompute under which the step fits the device.
void recompute_as_little_as_fits(TrainingJob& job) {
  for (Recompute level : {Recompute::selective, Recompute::mlp, Recompute::full}) {
    if (peak_memory(job).total_bytes() <= job.accelerator.memory_bytes) return;
    if (level > job.recompute) job.recompute = level;
  }
}

// The row's job, or the reason it cannot be predicted (std::nullopt and `why` set).
std::optional<TrainingJob> job_of(const RowReader& row, int devices, std::string& why) {
  TrainingJob job;
  if (devices > 1 && row.empty("dp") && row.empty("tp") && row.empty("pp") && row.empty("fsdp")) {
    why = "no layout: dp, tp, pp and fsdp empty";
    return std::nullopt;
  }
  const std::optional<Accelerator> accelerator = accelerator_from_description(row.text("gpu"));
  if (!accelerator) {
    why = fmt::format("no accelerator model for '{}'", row.text("gpu"));
    return std::nullopt;
  }
  job.accelerator = *accelerator;
  job.software = row.described("software", software_from_description);
  job.precision = row.described("precision", precision_from_description);
  require_precision(job.accelerator, job.precision, row.where());
  job.model = model_of(row);
  job.recompute = recompute_of(row, job.software.framework);

  ParallelLayout& l = job.layout;
  l.devices = devices;
  l.tensor = row.degree("tp");
  l.pipeline = row.degree("pp");
  l.context = row.degree("cp");
  l.expert = row.degree("ep");
  l.virtual_stages = row.degree("vp");
  // tp x pp x cp, or 0 where it exceeds the devices (the degrees are read up to 2^24 each, so
  // their product is taken in floating point first).
  const std::int64_t model_parallel =
      static_cast<double>(l.tensor) * l.pipeline * l.context <= devices
          ? std::int64_t{l.tensor} * l.pipeline * l.context
          : 0;
  if (row.empty("dp") && (model_parallel == 0 || devices % model_parallel != 0)) {
    throw Error(fmt::format(
        "{}: tp x pp x cp = {} x {} x {} = {:.0f}: expected a divisor of gpus_total ({}), "
        "the data-parallel degree being what it leaves",
        row.where(), l.tensor, l.pipeline, l.context,
        static_cast<double>(l.tensor) * l.pipeline * l.context, devices));
  }
  l.data = row.degree("dp", model_parallel > 0 ? static_cast<int>(devices / model_parallel) : 0);
  const int zero_stage = static_cast<int>(row.integer("zero_stage", 0, 0));
  l.fsdp = row.degree("fsdp");
  // HSDP written as replicas and shards (MaxText's dcn data parallelism across slices times its
  // ici fsdp inside one): the data-parallel degree is both.
  // (In floating point: the degrees are read up to 2^24 each.)
  const double replicas_and_shards = static_cast<double>(l.data) * l.fsdp * model_parallel;
  if (l.fsdp > 1 && static_cast<double>(l.data) * model_parallel != devices &&
      replicas_and_shards == devices) {
    l.data *= l.fsdp;
  }
  // ZeRO-3 shards over every data rank; memory and the step shard over fsdp x cp, as the
  // frameworks shard over the context ranks too.
  if (l.fsdp == 1 && zero_stage == 3) l.fsdp = l.data;
  // ZeRO-2 as FSDP's SHARD_GRAD_OP (llm-foundry): gradients and optimizer states sharded over the
  // data ranks, the weights gathered once a micro-batch and kept.
  if (l.fsdp == 1 && zero_stage == 2 && l.data * l.context > 1) {
    l.fsdp = l.data;
    l.reshard_after_forward = false;
  }
  // torchtitan keeps the weights unsharded from forward to backward under a pipeline
  // (fsdp_reshard_after_forward "default").
  if (job.software.framework == Framework::torchtitan && l.pipeline > 1) {
    l.reshard_after_forward = false;
  }
  // Megatron's distributed optimizer since 2022 (its papers' 2021 runs kept whole optimizer
  // states on every replica); FSDP shards everything anyway.
  l.distributed_optimizer = job.software.distributed_optimizer || zero_stage >= 1;

  job.batch.sequence = row.integer("seq_len", 0);
  job.batch.global_sequences = row.integer("global_batch_seqs", 0);
  job.batch.micro_batch_sequences = row.integer("micro_batch", 1);
  if (job.batch.sequence == 0) why = "no seq_len";
  if (job.batch.global_sequences == 0) why = "no global_batch_seqs";
  if (!why.empty()) return std::nullopt;
  // torchtitan's micro_batch column is the local batch; its pipelines split it into
  // micro-batches of one sequence (pipeline_parallel_microbatch_size 1).
  if (job.software.framework == Framework::torchtitan && l.pipeline > 1) {
    job.batch.micro_batch_sequences = 1;
  }
  // MaxText's per_device_batch_size counts every chip, tensor-parallel ones too; without
  // gradient accumulation a replica's whole share is one micro-batch.
  if (job.software.framework == Framework::maxtext && job.batch.global_sequences % l.data == 0) {
    job.batch.micro_batch_sequences = job.batch.global_sequences / l.data;
  }
  job.devices_per_node = row.degree("gpus_per_node", 8);
  l.context_exchange = context_exchange_of(row, job.software.framework);
  if (const std::optional<double> imbalance = row.positive("moe_imbalance")) {
    if (*imbalance < 1 || !job.model.moe) {
      throw Error(fmt::format("{}: moe_imbalance '{}': expected a number of at least 1 (the "
                              "busiest expert's tokens over the mean) on a model with experts",
                              row.where(), row.text("moe_imbalance")));
    }
    job.moe_imbalance = *imbalance;
  }
  check_training_job(job, row.where());
  if (row.empty("recompute")) recompute_as_little_as_fits(job);
  return job;
}

std::string source_of(const std::string& source_id) {
  const std::size_t dash = source_id.rfind('-');
  return dash == std::string::npos ? source_id : source_id.substr(0, dash);
}

}  // namespace

PublishedRun published_run(const FieldLookup& field, const std::string& where, int line) {
  const RowReader row(field, where);
  PublishedRun run;
  run.line = line;
  run.source_id = row.text("source_id");
  run.source = source_of(run.source_id);
  run.model_name = row.text("model");
  run.gpu = row.text("gpu");
  run.devices = row.degree("gpus_total");
  run.measured_step_s = row.positive("measured_step_s");
  row.positive("measured_tokens_per_s_per_gpu");  // checked; the step time is what is compared
  run.job = job_of(row, run.devices, run.not_predicted);
  return run;
}

bool is_published_steps_table(const CsvTable& table) {
  return table.column_index("measured_step_s").has_value() &&
         table.column_index("gpus_total").has_value();
}

std::vector<PublishedRun> read_published_runs(const CsvTable& table) {
  table.require_columns({"source_id", "model", "layers", "d_model", "heads", "kv_heads", "d_ff",
                         "vocabulary", "moe_experts", "moe_topk", "seq_len", "global_batch_seqs",
                         "micro_batch", "gpu", "gpus_total", "gpus_per_node", "dp", "tp", "pp",
                         "cp", "ep", "vp", "fsdp", "zero_stage", "recompute", "precision",
                         "measured_tokens_per_s_per_gpu", "measured_step_s", "software"},
                        kExpected);
  std::vector<PublishedRun> runs;
  for (const CsvRecord& record : table.records()) {
    // Optional columns (cp_comm_type, moe_imbalance) read as empty where the table has none.
    const FieldLookup field = [&](std::string_view column) {
      return table.column_index(column) ? table.field(record, column) : std::string();
    };
    runs.push_back(published_run(field, table.where(record), record.line));
  }
  return runs;
}

}  // namespace spmd::training
