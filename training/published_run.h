#pragma once
// Published training runs in the columns of the published-steps format (docs/validation.md,
// "Training steps"): one row per run, its model, layout, machine, precision, software and what
// it measured. Each row becomes a TrainingJob with the framework's defaults for what the row
// leaves out (docs/training-model.md, "Defaults"), or a reason it cannot be predicted.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/csv_table.h"
#include "training/training_job.h"

namespace spmd::training {

struct PublishedRun {
  int line = 0;
  std::string source_id;  // "MBRIDGE-013"
  std::string source;     // the source's part of the id: "MBRIDGE"
  std::string model_name;
  std::string gpu;        // as written
  int devices = 0;
  std::optional<TrainingJob> job;  // none: not predicted, for `not_predicted`
  std::string not_predicted;
  std::optional<double> measured_step_s;
};

// A run's description field by field, by the published columns' names: the field's text, empty
// where the description leaves it out.
using FieldLookup = std::function<std::string(std::string_view column)>;

// The run a description gives; `where` starts its errors ("runs.csv:7", "job.json"), `line` is
// the run's line (0 outside a table). spmd::Error as read_published_runs.
PublishedRun published_run(const FieldLookup& field, const std::string& where, int line);

// True when the table has the published-steps columns (validate tells the two formats apart by
// their header).
bool is_published_steps_table(const CsvTable& table);

// Every row; spmd::Error "FILE:LINE: FIELD 'VALUE': expected ..." for a field of the wrong type
// or a layout that contradicts itself.
std::vector<PublishedRun> read_published_runs(const CsvTable& table);

}  // namespace spmd::training
