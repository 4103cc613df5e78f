#include "cli/run_outputs.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "reference/error.h"
#include "traces/chrome_trace.h"
#include "traces/run_report.h"

namespace spmd {
namespace {

std::ofstream open_for_writing(const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(fmt::format("{}: cannot write this file", path.string()));
  return out;
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
  open_for_writing(outputs.trace_path)
      << traces::chrome_trace_text(log, {.machine_name = machine_name, .devices = devices});
  {
    std::ofstream csv = open_for_writing(dir / "collectives.csv");
    traces::write_collectives_csv(csv, log);
  }
  {
    std::ofstream csv = open_for_writing(dir / "devices.csv");
    traces::write_devices_csv(csv, log);
  }
  open_for_writing(outputs.report_path)
      << traces::run_report_json(log, machine_name).dump(2) << '\n';
  return outputs;
}

}  // namespace spmd
