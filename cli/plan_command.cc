#include "cli/plan_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <exception>
#include <memory>
#include <optional>

#include "cli/plan_mpi.h"
#include "reference/error.h"
#include "support/output_file.h"
#include "training/layout_search.h"

namespace spmd {
namespace {

using training::PlanOutcome;
using training::PlanResult;
using training::PlanSetting;

struct Machine {
  std::string preset;
  std::string description;  // the gpu field it stands for
  std::optional<double> price_per_gpu_hour;
};

std::string preset_list() {
  std::string text;
  for (const std::string& preset : training::accelerator_presets()) {
    text += (text.empty() ? "" : ", ") + preset;
  }
  return text;
}

// "hgx-h100" or "hgx-h100:2.5".
Machine machine_of(const std::string& flag, const std::string& text) {
  Machine machine;
  const std::size_t colon = text.find(':');
  machine.preset = text.substr(0, colon);
  if (colon != std::string::npos) {
    const std::string price = text.substr(colon + 1);
    double value = 0;
    const auto [end, error] = std::from_chars(price.data(), price.data() + price.size(), value);
    if (error != std::errc() || end != price.data() + price.size() || !(value > 0) ||
        !std::isfinite(value)) {
      throw Error(fmt::format("{} {}: expected PRESET or PRESET:PRICE, the price a positive "
                              "number (per GPU-hour)",
                              flag, text));
    }
    machine.price_per_gpu_hour = value;
  }
  const std::optional<training::PresetAccelerator> found =
      training::accelerator_of_preset(machine.preset);
  if (!found) {
    throw Error(fmt::format("{} {}: expected a GPU machine preset: {}", flag, machine.preset,
                            preset_list()));
  }
  machine.description = found->description;
  return machine;
}

std::vector<Machine> machines_of(const PlanOptions& options) {
  std::vector<Machine> machines;
  if (!options.machine.empty()) machines.push_back(machine_of("--machine", options.machine));
  for (const std::string& text : options.machines) {
    machines.push_back(machine_of("--machines", text));
  }
  if (machines.empty()) machines.push_back(Machine{});  // the model file's gpu
  return machines;
}

std::string sharding_text(const training::Candidate& c) {
  return c.sharding == training::DataSharding::hsdp
             ? fmt::format("hsdp {}", c.fsdp)
             : std::string(training::data_sharding_name(c.sharding));
}

double tokens_per_step(const PlanSetting& s) {
  return static_cast<double>(s.base.batch.global_sequences) *
         static_cast<double>(s.base.batch.sequence);
}

// Dollars per million tokens at `price` per GPU-hour.
double cost_per_million_tokens(const PlanSetting& s, const PlanResult& r, double price) {
  return price * s.devices * r.step.total_s() / 3600 / (tokens_per_step(s) / 1e6);
}

void print_header(const PlanSetting& s, std::ostream& out) {
  const training::ModelShape& m = s.base.model;
  out << fmt::format(
      "model: {} layers, d_model {}, heads {} (kv {}), d_ff {}{}, vocabulary {}: {:.1f} B "
      "parameters; {} sequences of {} tokens a step; {}\n",
      m.layers, m.d_model, m.heads, m.kv_heads, m.d_ff,
      m.moe ? fmt::format(", {} experts (top {})", m.moe->experts, m.moe->top_k) : "",
      m.vocabulary, training::total_parameters(m) / 1e9, s.base.batch.global_sequences,
      s.base.batch.sequence, training::framework_name(s.base.software.framework));
}

void print_counts(const training::PlanCounts& c, std::ostream& out) {
  out << fmt::format(
      "layouts considered: {}; dropped: {} do not divide, {} refused by the layout checks, {} do "
      "not fit in memory; ranked: {}\n",
      c.considered, c.not_dividing, c.layout_errors, c.not_fitting, c.ranked);
}

void print_table(const PlanSetting& s, const PlanOutcome& outcome, int top,
                 const std::optional<double>& price, std::ostream& out) {
  out << fmt::format("{:>4} {:<6} {:>2} {:>3} {:>3} {:>3} {:>3} {:>5} {:<8} {:>2} {:<9} "
                     "{:>9} {:>15} {:>9} {:>6} {:>7} {:>9}{}\n",
                     "#", "prec", "tp", "pp", "vp", "cp", "ep", "dp", "sharding", "mb",
                     "recompute", "step s", "range s", "tok/s/GPU", "MFU", "mem GB", "comm s",
                     price ? fmt::format(" {:>9}", "$/M tok") : "");
  const std::vector<training::EquivalentRun> runs =
      training::equivalent_runs(outcome.results, static_cast<std::size_t>(top));
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const PlanResult& r = outcome.results[runs[i].first];
    const training::Candidate& c = r.candidate;
    out << fmt::format(
        "{:>4} {:<6} {:>2} {:>3} {:>3} {:>3} {:>3} {:>5} {:<8} {:>2} {:<9} {:>9.3f} {:>15} "
        "{:>9.0f} {:>5.1f}% {:>7.1f} {:>9.3f}{}{}\n",
        i + 1, training::precision_name(c.precision), c.tensor, c.pipeline, c.virtual_stages,
        c.context, c.expert, c.data, sharding_text(c), c.micro_batch,
        training::recompute_name(c.recompute), r.step.total_s(),
        fmt::format("{:.3g}-{:.3g}", r.range.low, r.range.high), r.tokens_per_s_per_gpu,
        100 * r.model_flops_utilization, r.memory.total_bytes() / 1e9, r.step.communication_s(),
        price ? fmt::format(" {:>9.3f}", cost_per_million_tokens(s, r, *price)) : "",
        runs[i].size > 1 ? fmt::format("  (+{} the same)", runs[i].size - 1) : "");
  }
  if (std::any_of(runs.begin(), runs.end(), [](const auto& run) { return run.size > 1; })) {
    out << "(+N the same: N more layouts predicted the same step and memory, listed by --json)\n";
  }
  if (runs.size() >= 2) {
    out << "why: "
        << training::why_best_beats_next(outcome.results[runs[0].first],
                                         outcome.results[runs[1].first])
        << "\n";
  }
}

struct Plan {
  Machine machine;
  PlanSetting setting;
  PlanOutcome outcome;
  std::string nothing_ranked;  // why, where the search ranked no layout (a comparison goes on)
};

void print_comparison(const std::vector<Plan>& plans, std::ostream& out) {
  const bool priced = std::any_of(plans.begin(), plans.end(), [](const Plan& p) {
    return p.machine.price_per_gpu_hour.has_value();
  });
  out << fmt::format("\nbest layout per machine and device count, fastest first:\n");
  std::vector<const Plan*> order;
  for (const Plan& p : plans) {
    if (p.nothing_ranked.empty()) order.push_back(&p);
  }
  // By tokens/s of the whole machine, then by the order given (a stable sort).
  std::stable_sort(order.begin(), order.end(), [](const Plan* a, const Plan* b) {
    const double ta = a->outcome.results.front().tokens_per_s_per_gpu * a->setting.devices;
    const double tb = b->outcome.results.front().tokens_per_s_per_gpu * b->setting.devices;
    return ta > tb;
  });
  out << fmt::format("{:<14} {:>7} {:>9} {:>12} {:>9} {:>6}{}  {}\n", "machine", "devices",
                     "step s", "tokens/s", "tok/s/GPU", "MFU", priced ? "    $/M tok" : "",
                     "layout");
  for (const Plan* p : order) {
    const PlanResult& best = p->outcome.results.front();
    std::string cost;
    if (priced) {
      cost = p->machine.price_per_gpu_hour
                 ? fmt::format(" {:>10.3f}", cost_per_million_tokens(
                                                 p->setting, best, *p->machine.price_per_gpu_hour))
                 : fmt::format(" {:>10}", "-");
    }
    out << fmt::format("{:<14} {:>7} {:>9.3f} {:>12.0f} {:>9.0f} {:>5.1f}%{}  {}\n",
                       p->setting.base.accelerator.preset, p->setting.devices,
                       best.step.total_s(), best.tokens_per_s_per_gpu * p->setting.devices,
                       best.tokens_per_s_per_gpu, 100 * best.model_flops_utilization, cost,
                       training::candidate_text(best.candidate));
  }
}

nlohmann::json json_of(const std::vector<Plan>& plans) {
  nlohmann::json list = nlohmann::json::array();
  for (const Plan& p : plans) {
    const training::PlanCounts& c = p.outcome.counts;
    nlohmann::json entry = {
        {"machine", p.setting.base.accelerator.preset},
        {"gpu", p.setting.base.accelerator.name},
        {"devices", p.setting.devices},
        {"counts",
         {{"considered", c.considered}, {"not_dividing", c.not_dividing},
          {"layout_errors", c.layout_errors}, {"not_fitting", c.not_fitting},
          {"ranked", c.ranked}}},
        {"results", p.outcome.results}};
    if (!p.nothing_ranked.empty()) entry["nothing_ranked"] = p.nothing_ranked;
    entry["price_per_gpu_hour"] = p.machine.price_per_gpu_hour
                                      ? nlohmann::json(*p.machine.price_per_gpu_hour)
                                      : nlohmann::json(nullptr);
    list.push_back(std::move(entry));
  }
  return nlohmann::json{{"plans", list}};
}

}  // namespace

void add_plan_flags(CLI::App& command, PlanOptions& options) {
  command.add_option("--model", options.model,
                     "A training workload (docs/workload-format.md) with its layout fields left "
                     "out; those given are held fixed")
      ->required();
  command.add_option("--machine", options.machine,
                     "The GPU machine preset (hgx-h100, hgx-b200, gb200-nvl72, ...); default: "
                     "the model file's gpu");
  command.add_option("--machines", options.machines,
                     "Machines to compare, each PRESET or PRESET:PRICE (per GPU-hour, for the "
                     "cost of a million tokens)")
      ->delimiter(',');
  command.add_option("--devices", options.devices, "Device counts, N[,M,...]")
      ->required()
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 24));
  command.add_option("--top", options.top, "Layouts to print per machine and device count")
      ->capture_default_str();
  command.add_option("--threads", options.threads,
                     "Threads for the search (default: the hardware's; the output is the same "
                     "for any)");
  command.add_option("--json", options.json, "A JSON file for every ranked layout");
}

int run_plan_command(const PlanOptions& options, std::ostream& out) {
  if (options.top < 1) {
    throw Error(fmt::format("--top {}: expected at least 1", options.top));
  }
  if (options.threads > 4096) {
    throw Error(fmt::format("--threads {}: expected at most 4096 (0: the hardware's)",
                            options.threads));
  }
  const training::PlanModel model = training::load_plan_model(options.model);
  const std::vector<Machine> machines = machines_of(options);
  std::vector<Plan> plans;
  for (const Machine& machine : machines) {
    for (int devices : options.devices) {
      plans.push_back(Plan{.machine = machine,
                           .setting = training::plan_setting(model, machine.description, devices)});
    }
  }
  // Under mpirun every rank searches its share of each plan's layouts and rank 0 prints; the
  // inputs were all checked above, on every rank alike, before MPI starts.
  std::optional<mpi::WorkSplit> split;
  if (mpi::started_by_process_manager()) split.emplace();
  const std::unique_ptr<training::SearchShare> share =
      split ? std::make_unique<MpiSearchShare>(*split) : std::make_unique<training::SearchShare>();
  const unsigned threads =
      options.threads == 0 && split ? default_threads_per_rank() : options.threads;
  // The printed rows need the layouts of the best `top` speeds; --json writes every one.
  const training::KeptResults kept{
      .best_speeds = options.json.empty() ? std::optional<std::size_t>(options.top) : std::nullopt};
  // A search that ranks nothing throws on the printing rank only, after its gather: the error
  // waits until every plan's gather is done, so no rank is left in a gather the others skipped.
  // One search's error is the command's; in a comparison it is that machine's line, and the
  // command fails only where no machine or count ranks a layout.
  std::exception_ptr first_error;
  for (Plan& plan : plans) {
    try {
      std::optional<PlanOutcome> outcome =
          training::search_layouts(plan.setting, threads, kept, *share);
      if (outcome) plan.outcome = std::move(*outcome);
    } catch (const Error& error) {
      if (!first_error) first_error = std::current_exception();
      plan.nothing_ranked = error.what();
    }
  }
  const bool any_ranked = std::any_of(plans.begin(), plans.end(),
                                      [](const Plan& p) { return p.nothing_ranked.empty(); });
  if (first_error && (plans.size() == 1 || !any_ranked)) std::rethrow_exception(first_error);
  if (split && split->share().rank != 0) return 0;
  print_header(plans.front().setting, out);
  for (const Plan& p : plans) {
    const training::Accelerator& a = p.setting.base.accelerator;
    out << fmt::format("\n{} x {} ({}, {:.0f} GB each){}\n", p.setting.devices, a.name, a.preset,
                       a.memory_bytes / 1e9,
                       p.machine.price_per_gpu_hour
                           ? fmt::format(", ${:g} per GPU-hour", *p.machine.price_per_gpu_hour)
                           : "");
    if (!p.nothing_ranked.empty()) {
      out << p.nothing_ranked << "\n";
      continue;
    }
    print_counts(p.outcome.counts, out);
    print_table(p.setting, p.outcome, options.top, p.machine.price_per_gpu_hour, out);
  }
  if (plans.size() > 1) print_comparison(plans, out);
  if (!options.json.empty()) {
    write_output_file(options.json, json_of(plans).dump() + "\n");
    out << fmt::format("wrote {}\n", options.json);
  }
  return 0;
}

}  // namespace spmd
