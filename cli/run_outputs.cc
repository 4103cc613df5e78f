#include "cli/run_outputs.h"

#include <fmt/format.h>

#include <filesystem>
#include <sstream>

#include "reference/error.h"
#include "support/output_file.h"
#include "traces/chrome_trace.h"
#include "traces/run_report.h"

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
                             const std::string& machine_name, int devices) {
  const std::filesystem::path dir(folder);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    throw Error(fmt::format("--out {}: cannot create the folder ({})", folder, error.message()));
  }
  RunOutputs outputs{folder, (dir / "trace.json").string(), (dir / "report.json").string()};
  write_output_file(outputs.trace_path, traces::chrome_trace_text(
                                            log, {.machine_name = machine_name, .devices = devices}));
  write_output_file(dir / "collectives.csv",
                    written([&](std::ostream& csv) { traces::write_collectives_csv(csv, log); }));
  write_output_file(dir / "devices.csv",
                    written([&](std::ostream& csv) { traces::write_devices_csv(csv, log); }));
  write_output_file(outputs.report_path, traces::run_report_json(log, machine_name).dump(2) + "\n");
  return outputs;
}

}  // namespace spmd
