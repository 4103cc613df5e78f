#include "cli/validate_training.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cli/error_limit_flags.h"
#include "cli/gnuplot.h"
#include "training/training_prediction.h"
#include "validation/error_summary.h"

namespace spmd {
namespace {

using training::PublishedRun;
using training::TrainingPrediction;

// Predictions grouped by a key (source or GPU), in the order the file first names each key.
struct Group {
  std::string key;
  std::vector<const TrainingPrediction*> predictions;
};

std::vector<Group> group_by(const std::vector<TrainingPrediction>& predictions,
                            std::string (*key_of)(const PublishedRun&)) {
  std::vector<Group> groups;
  std::map<std::string, std::size_t> index;
  for (const TrainingPrediction& prediction : predictions) {
    const std::string key = key_of(*prediction.run);
    auto [at, inserted] = index.try_emplace(key, groups.size());
    if (inserted) groups.push_back(Group{key, {}});
    groups[at->second].predictions.push_back(&prediction);
  }
  return groups;
}

std::string source_key(const PublishedRun& run) { return run.source; }
std::string gpu_key(const PublishedRun& run) {
  return run.job ? run.job->accelerator.name : run.gpu;
}

std::vector<double> errors_of(const std::vector<const TrainingPrediction*>& predictions) {
  std::vector<double> errors;
  for (const TrainingPrediction* prediction : predictions) {
    if (prediction->error) errors.push_back(*prediction->error);
  }
  return errors;
}

std::string layout_text(const training::TrainingJob& job) {
  const training::ParallelLayout& l = job.layout;
  std::string text = fmt::format("dp{}", l.data);
  auto add = [&](std::string_view name, int degree) {
    if (degree > 1) text += fmt::format(" {}{}", name, degree);
  };
  add("tp", l.tensor);
  add("pp", l.pipeline);
  add("vp", l.virtual_stages);
  add("cp", l.context);
  add("ep", l.expert);
  add("fsdp", l.fsdp);
  return text;
}

// "N of M inside their range" over the rows with a published step.
std::string inside_range_text(const std::vector<const TrainingPrediction*>& predictions) {
  int with_step = 0, inside = 0;
  for (const TrainingPrediction* p : predictions) {
    if (!p->error) continue;
    ++with_step;
    if (p->range.contains(*p->run->measured_step_s)) ++inside;
  }
  return fmt::format("{} of {} inside their range", inside, with_step);
}

std::string summary_line(const ErrorSummary& summary) {
  return fmt::format("{} row{} with a step time, median |error| {}, p90 {}, within 10% {}",
                     summary.rows, summary.rows == 1 ? "" : "s",
                     percent_text(summary.median_abs_error), percent_text(summary.p90_abs_error),
                     percent_text(summary.share_within_10_percent));
}

void print_run(const TrainingPrediction& p, std::ostream& out) {
  const PublishedRun& run = *p.run;
  if (!p.step) {
    out << fmt::format("  {:>4}  {:<16} not predicted: {}\n", run.line, run.source_id,
                       run.not_predicted);
    return;
  }
  const training::TrainingJob& job = *run.job;
  const std::string published =
      run.measured_step_s ? fmt::format("{:.3f}", *run.measured_step_s) : "-";
  const std::string error = p.error ? fmt::format("{:+.1f}%", 100 * *p.error) : "-";
  const std::string range = fmt::format("{:.3g}-{:.3g}", p.range.low, p.range.high);
  const bool fits = p.memory.total_bytes() <= job.accelerator.memory_bytes;
  out << fmt::format(
      "  {:>4}  {:<16} {:<22.22} {:<13.13} {:>5}  {:<26} {:<6} {:>10} {:>10.3f} {:>15} {:>7}  "
      "{:>8.0f} {:>5.1f}% {:>6.1f}{}\n",
      run.line, run.source_id, run.model_name, job.accelerator.name, run.devices,
      layout_text(job), training::precision_name(job.precision), published, p.step->total_s(),
      range, error, p.tokens_per_s_per_gpu, 100 * p.model_flops_utilization,
      p.memory.total_bytes() / 1e9, fits ? "" : " over");
}

void print_rows(const std::vector<TrainingPrediction>& predictions, std::ostream& out) {
  out << fmt::format("  {:>4}  {:<16} {:<22} {:<13} {:>5}  {:<26} {:<6} {:>10} {:>10} {:>15} "
                     "{:>7}  {:>8} {:>6} {:>6}\n",
                     "line", "run", "model", "GPU", "GPUs", "layout", "prec.", "published",
                     "predicted", "range", "error", "tok/s/GPU", "MFU", "memory");
  out << fmt::format("  {:>4}  {:<16} {:<22} {:<13} {:>5}  {:<26} {:<6} {:>10} {:>10} {:>15} "
                     "{:>7}  {:>8} {:>6} {:>6}\n",
                     "", "", "", "", "", "", "", "(s)", "(s)", "(s)", "", "", "", "(GB)");
  for (const Group& source : group_by(predictions, source_key)) {
    out << source.key << "\n";
    for (const TrainingPrediction* prediction : source.predictions) print_run(*prediction, out);
    out << "  " << source.key << ": " << summary_line(summarize_errors(errors_of(source.predictions)))
        << ", " << inside_range_text(source.predictions) << "\n\n";
  }
  out << "by GPU:\n";
  for (const Group& gpu : group_by(predictions, gpu_key)) {
    const ErrorSummary summary = summarize_errors(errors_of(gpu.predictions));
    if (summary.rows == 0) continue;
    out << "  " << gpu.key << ": " << summary_line(summary) << "\n";
  }
}

void print_summary_table(std::string_view heading, const std::vector<Group>& groups,
                         const ErrorSummary& overall, std::ostream& out) {
  out << fmt::format("| {} | rows | median \\|error\\| | p90 \\|error\\| | within 10% |\n", heading);
  out << "|---|---|---|---|---|\n";
  for (const Group& group : groups) {
    const ErrorSummary s = summarize_errors(errors_of(group.predictions));
    if (s.rows == 0) continue;
    out << fmt::format("| {} | {} | {} | {} | {} |\n", group.key, s.rows,
                       percent_text(s.median_abs_error), percent_text(s.p90_abs_error),
                       percent_text(s.share_within_10_percent));
  }
  out << fmt::format("| all | {} | {} | {} | {} |\n\n", overall.rows,
                     percent_text(overall.median_abs_error), percent_text(overall.p90_abs_error),
                     percent_text(overall.share_within_10_percent));
}

// Per GPU: published against predicted step time, log-log, with the line of equality.
void write_plots(const std::vector<TrainingPrediction>& predictions, const std::string& plot_dir,
                 std::ostream& out, std::ostream& err) {
  std::filesystem::create_directories(plot_dir);
  const bool draw = gnuplot_on_path();
  for (const Group& gpu : group_by(predictions, gpu_key)) {
    if (errors_of(gpu.predictions).empty()) continue;
    std::string stem;
    for (char c : gpu.key) stem += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    const std::filesystem::path data = std::filesystem::path(plot_dir) / (stem + ".dat");
    const std::filesystem::path script = std::filesystem::path(plot_dir) / (stem + ".gp");
    {
      std::ofstream file(data);
      file << "# published_s predicted_s run\n";
      for (const TrainingPrediction* p : gpu.predictions) {
        if (!p->error) continue;
        file << fmt::format("{} {} {}\n", *p->run->measured_step_s, p->step->total_s(),
                            p->run->source_id);
      }
    }
    {
      std::ofstream file(script);
      file << fmt::format(
          "set terminal pngcairo size 800,700\nset output {}\nset logscale xy\nset grid\n"
          "set xlabel 'published step (s)'\nset ylabel 'predicted step (s)'\nset title {}\n"
          "plot {} using 1:2 with points pt 7 title 'runs', x with lines title 'predicted = "
          "published'\n",
          gnuplot_quoted((std::filesystem::path(plot_dir) / (stem + ".png")).string()),
          gnuplot_quoted(gpu.key + ": training step, predicted against published"),
          gnuplot_quoted(data.string()));
    }
    if (draw) run_gnuplot(script, "leave out --plot-dir to skip the plots");
  }
  if (!draw) err << "validate: gnuplot is not on PATH: wrote the data and scripts to " << plot_dir
                 << " but no PNGs\n";
  out << "plots: " << plot_dir << "\n";
}

}  // namespace

int run_training_validate(const CsvTable& table, const ValidateOptions& options, std::ostream& out,
                          std::ostream& err) {
  // Every row is read and predicted before anything is printed: bad input is one error.
  const std::vector<PublishedRun> runs = training::read_published_runs(table);
  const std::vector<TrainingPrediction> predictions = training::predict_runs(runs);
  std::vector<const TrainingPrediction*> all;
  for (const TrainingPrediction& p : predictions) all.push_back(&p);
  const ErrorSummary overall = summarize_errors(errors_of(all));
  if (options.summary) {
    print_summary_table("source", group_by(predictions, source_key), overall, out);
    print_summary_table("GPU", group_by(predictions, gpu_key), overall, out);
    out << error_band_table(training::error_bands_of(predictions)) << "\n";
    out << inside_range_text(all) << "\n";
  } else {
    out << fmt::format("spmdsim validate: {}: {} training runs\n\n", table.file_name(),
                       runs.size());
    print_rows(predictions, out);
    out << "all rows: " << summary_line(overall) << ", " << inside_range_text(all) << "\n";
  }
  int without_step = 0;
  for (const TrainingPrediction& p : predictions) {
    if (p.step && !p.error) ++without_step;
  }
  out << fmt::format("{} row{} predicted without a published step time (listed, not counted)\n",
                     without_step, without_step == 1 ? "" : "s");
  std::map<std::string, int> reasons;
  for (const TrainingPrediction& p : predictions) {
    if (!p.step) ++reasons[p.run->not_predicted];
  }
  for (const auto& [reason, count] : reasons) {
    out << fmt::format("{} row{} not predicted ({})\n", count, count == 1 ? "" : "s", reason);
  }
  if (!options.plot_dir.empty()) write_plots(predictions, options.plot_dir, out, err);
  out.flush();
  return exit_code_for_limits(options.limits, overall, "row", "validate", err);
}

}  // namespace spmd
