#pragma once
// The layout search behind `spmdsim plan` (docs/plan.md): for a model (a `training` workload with
// its layout fields left out; those given are held fixed), a machine and a device count, every
// layout the frameworks allow (tensor, pipeline with virtual stages, context, expert parallel,
// data parallel with or without the distributed optimizer, FSDP, HSDP, micro-batch size,
// recompute, matmul precision), each checked, fitted into the device's memory and predicted by
// the step model (step_time.h), then ranked by tokens/s.
//
// The steps are separate so that a caller may split the work: enumerate_candidates gives the
// same list everywhere; evaluate_candidates predicts any contiguous range of it on a thread pool;
// results from several ranges (or processes: PlanResult goes to and from JSON) are merged and
// rank_results puts them in one total order, whatever the split or the thread count.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cost_model/fabric.h"
#include "training/prediction_range.h"
#include "training/step_time.h"
#include "training/training_job.h"
#include "training/training_memory.h"
#include "training/training_workload.h"

namespace spmd::training {

// How the data-parallel ranks hold weights, gradients and optimizer states: each its own (DDP),
// optimizer states sharded (ZeRO-1, Megatron's distributed optimizer), gradients and optimizer
// states sharded with the weights gathered once a micro-batch (ZeRO-2, FSDP's SHARD_GRAD_OP;
// only when a model file holds zero_stage 2), everything sharded over the data ranks (FSDP,
// ZeRO-3), or over a node's data ranks and replicated across nodes (HSDP).
enum class DataSharding { ddp, zero1, zero2, fsdp, hsdp };
std::string_view data_sharding_name(DataSharding sharding);

struct Candidate {
  MatmulPrecision precision = MatmulPrecision::bf16;
  int tensor = 1;
  int pipeline = 1;
  int virtual_stages = 1;
  int context = 1;
  int expert = 1;
  int data = 1;
  DataSharding sharding = DataSharding::zero1;
  int fsdp = 1;  // the shard group's data ranks (fsdp: all; hsdp: a node's; else 1)
  std::int64_t micro_batch = 1;
  Recompute recompute = Recompute::none;
};
// "fp8 tp 8 pp 4 vp 5 cp 1 ep 1 dp 32 zero-1 mb 1 recompute none"
std::string candidate_text(const Candidate& candidate);
// A total order on layouts (the ranking's tie-break).
bool layout_before(const Candidate& a, const Candidate& b);

// Layout fields a model file gives, held fixed by the search.
struct HeldLayout {
  std::optional<int> tensor, pipeline, virtual_stages, context, expert, data, fsdp, zero_stage;
  std::optional<std::int64_t> micro_batch;
  std::optional<Recompute> recompute;
  std::optional<MatmulPrecision> precision;
};

// A model file: a `training` workload (docs/workload-format.md) whose layout fields may be left
// out, or a `transformer` workload read as one (training/transformer_as_training.h).
struct PlanModel {
  std::string file;
  TrainingFields fields;
  HeldLayout held;
};
PlanModel plan_model_from_json(const nlohmann::json& json, const std::string& file_name);
PlanModel load_plan_model(const std::string& path);

// What one search holds fixed: the model, batch, software, accelerator and node size (`base`,
// its layout one device), the device count and the held fields.
struct PlanSetting {
  TrainingJob base;
  int devices = 1;
  HeldLayout held;
  std::string where;  // the model file, for errors
  cost_model::Fabric fabric;  // the accelerator's machine preset's
};
// `gpu_description`: the accelerator as a `gpu` field writes it (accelerator_of_preset's), or
// empty for the model file's own `gpu`. spmd::Error naming the field for a model file that
// contradicts itself, the device count or the accelerator (a precision it has no tensor cores
// for, a preset without a fabric).
PlanSetting plan_setting(const PlanModel& model, const std::string& gpu_description, int devices);

struct CandidateList {
  std::vector<Candidate> candidates;  // the combinations whose degrees divide: to evaluate
  std::int64_t considered = 0;        // every combination of the options
  std::int64_t not_dividing = 0;
  std::string first_not_dividing;  // why the first combination that did not divide did not
};
CandidateList enumerate_candidates(const PlanSetting& setting);

enum class PlanStatus { ranked, does_not_fit, layout_error };

struct PlanResult {
  std::int64_t index = 0;  // in the candidate list
  Candidate candidate;
  PlanStatus status = PlanStatus::ranked;
  std::string layout_error;  // layout_error: check_training_job's message
  TrainingMemory memory;     // ranked, does_not_fit: the fullest device's
  StepTime step;             // ranked
  StepRange range;
  double tokens_per_s_per_gpu = 0;
  double model_flops_utilization = 0;
};

// The job a candidate describes, with the framework's rules applied (as published_run.h reads a
// row's layout).
TrainingJob candidate_job(const PlanSetting& setting, const Candidate& candidate);

// candidates[begin, end) on `threads` threads (0: the hardware's), in index order whatever the
// thread count.
std::vector<PlanResult> evaluate_candidates(const PlanSetting& setting,
                                            const std::vector<Candidate>& candidates,
                                            std::size_t begin, std::size_t end, unsigned threads);

// Ranked results first, by tokens/s (highest first), then the rest by status and memory; ties
// by layout_before. A total order: the same results in any order sort the same.
void rank_results(std::vector<PlanResult>& results);

struct PlanCounts {
  std::int64_t considered = 0;
  std::int64_t not_dividing = 0;
  std::int64_t layout_errors = 0;
  std::int64_t not_fitting = 0;
  std::int64_t ranked = 0;
};

// Which ranked results a search keeps: every one (`plan --json` writes them all), or those whose
// tokens/s is among the best `best_speeds` values: the layouts of the first `best_speeds` rows
// that equivalent_runs folds, each with every layout predicted the same.
struct KeptResults {
  std::optional<std::size_t> best_speeds;  // std::nullopt: every ranked result
};

// A share of a search's results reduced to what the process that prints needs: the kept ranked
// results in rank_results' order, how many were ranked, did not fit or were refused, and the
// two unranked results require_ranked can name (the layout that does not fit with the smallest
// memory, ties by layout_before; the refused one first in the candidate list). Processes send
// these rather than their results: most of a search does not fit, and most of what fits is
// never printed.
struct ShareSummary {
  std::vector<PlanResult> ranked;
  std::int64_t ranked_count = 0;  // all of the share's, kept or not
  std::int64_t not_fitting = 0;
  std::int64_t layout_errors = 0;
  std::optional<PlanResult> smallest_unfitting;
  std::optional<PlanResult> first_refused;
};
ShareSummary summarize_share(std::vector<PlanResult> results, const KeptResults& kept);
// The summary of every share together, keeping what `kept` keeps of the whole: the same
// whatever the shares' order or split, where each share kept as much.
ShareSummary combine_shares(std::vector<ShareSummary> shares, const KeptResults& kept);

PlanCounts count_results(const CandidateList& list, const ShareSummary& summary);

// spmd::Error when nothing was ranked: the first layout error where every divided layout was
// refused (held fields that contradict each other), the first refusal where nothing divides (a
// device count no layout fits), or, where nothing fits, the smallest memory any layout needed.
void require_ranked(const PlanSetting& setting, const CandidateList& list,
                    const ShareSummary& summary);

// Runs of ranked results the model cannot tell apart (the same step and memory, to the bit: Megatron's
// selective recompute under flash attention, cp x micro_batch traded one for the other), the
// first `most` of them: each run's first result (by rank) and its length.
struct EquivalentRun {
  std::size_t first = 0;
  std::size_t size = 1;
};
std::vector<EquivalentRun> equivalent_runs(const std::vector<PlanResult>& ranked, std::size_t most);

// One line: why `best` is predicted faster than `next` (the step's parts that differ most, and
// the layout fields that differ).
std::string why_best_beats_next(const PlanResult& best, const PlanResult& next);

// candidates first, first + stride, first + 2·stride, ... on `threads` threads, in that order:
// a process's share of a search whose neighbouring candidates cost alike (a contiguous share
// would give one process the layouts that fit and are predicted, another those refused early).
std::vector<PlanResult> evaluate_candidates_strided(const PlanSetting& setting,
                                                    const std::vector<Candidate>& candidates,
                                                    std::size_t first, std::size_t stride,
                                                    unsigned threads);

// The whole search: enumerate, evaluate on `threads`, rank, require_ranked.
struct PlanOutcome {
  CandidateList list;
  std::vector<PlanResult> results;  // ranked, those `kept`
  PlanCounts counts;
};
PlanOutcome search_layouts(const PlanSetting& setting, unsigned threads,
                           const KeptResults& kept = {});

// How a search's candidates are shared out among processes (`spmdsim plan` under mpirun, see
// cli/plan_mpi.h): each evaluates every `stride`-th candidate of the same list from its `first`,
// and the shares' summaries come together on the process that prints. The base class is one
// process with every candidate.
class SearchShare {
 public:
  virtual ~SearchShare() = default;
  virtual std::size_t first() const;
  virtual std::size_t stride() const;
  // Every process's summaries combined (combine_shares with `kept`), on the process that
  // prints; std::nullopt on the others. Every process calls it once per search.
  virtual std::optional<ShareSummary> gather(ShareSummary local, const KeptResults& kept) const;
};
// search_layouts over `share`'s processes: the outcome on the process that prints, std::nullopt
// on the others. The same outcome as one process, whatever the share.
std::optional<PlanOutcome> search_layouts(const PlanSetting& setting, unsigned threads,
                                          const KeptResults& kept, const SearchShare& share);

void to_json(nlohmann::json& json, const Candidate& candidate);
void from_json(const nlohmann::json& json, Candidate& candidate);
void to_json(nlohmann::json& json, const PlanResult& result);
void from_json(const nlohmann::json& json, PlanResult& result);

}  // namespace spmd::training
