#include "cli/run_outputs.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>

#include "reference/error.h"
#include "support/output_file.h"
#include "traces/chrome_trace.h"
#include "traces/run_report.h"
#include "traces/track_groups.h"

namespace spmd {
namespace {

template <class Writer>
std::string written(Writer write) {
  std::ostringstream text;
  write(text);
  return text.str();
}

}  // namespace

RunOutputs write_run_outputs(const std::string& folder, const sim::CostLog& log,
                             const sim::Machine& machine) {
  const std::string& machine_name = machine.spec().name;
  const std::filesystem::path dir(folder);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    throw Error(fmt::format("--out {}: cannot create the folder ({})", folder, error.message()));
  }
  RunOutputs outputs{folder, (dir / "trace.json").string(), (dir / "report.json").string()};
  const traces::TraceLabels labels{.machine_name = machine_name,
                                   .devices = machine.spec().devices,
                                   .groups = traces::track_groups_for(machine.topology())};
  write_output_file(outputs.trace_path, traces::chrome_trace_text(log, labels));
  write_output_file(dir / "collectives.csv",
                    written([&](std::ostream& csv) { traces::write_collectives_csv(csv, log); }));
  write_output_file(dir / "devices.csv",
                    written([&](std::ostream& csv) { traces::write_devices_csv(csv, log); }));
  write_output_file(outputs.report_path, traces::run_report_json(log, machine_name).dump(2) + "\n");
  return outputs;
}

std::string dropped_arrows_line(const sim::CostLog& log, const std::string& flag_hint) {
  if (!log.transfers_truncated) return "";
  return fmt::format("trace: arrows for the first {} of {} link messages only ({})\n",
                     log.transfers.size(), log.link_transfers, flag_hint);
}

}  // namespace spmd
