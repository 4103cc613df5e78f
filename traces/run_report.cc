#include "traces/run_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace spmd::traces {
namespace {

// CSV quoting for fields that may hold commas or quotes ("psum(('x', 'y'))").
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::int64_t at_or_zero(const std::vector<std::int64_t>& values, std::size_t i) {
  return i < values.size() ? values[i] : 0;
}

// The device that finished last (lowest id on ties).
int last_to_finish(const std::vector<std::int64_t>& device_end_ps) {
  int critical = 0;
  for (std::size_t d = 0; d < device_end_ps.size(); ++d) {
    if (device_end_ps[d] > device_end_ps[static_cast<std::size_t>(critical)]) {
      critical = static_cast<int>(d);
    }
  }
  return critical;
}

}  // namespace

std::vector<StepTotals> step_totals(const sim::CostLog& log) {
  std::vector<StepTotals> steps;
  for (const sim::StepRecord& step : log.steps) {
    StepTotals totals;
    totals.start_ps = step.start_ps;
    totals.time_ps = step.end_ps - step.start_ps;
    totals.critical_device = last_to_finish(step.device_end_ps);
    const auto critical = static_cast<std::size_t>(totals.critical_device);
    totals.exposed_communication_ps = at_or_zero(step.exposed_communication_ps, critical);
    totals.overlapped_communication_ps = at_or_zero(step.overlapped_communication_ps, critical);
    steps.push_back(totals);
  }
  return steps;
}

RunTotals run_totals(const sim::CostLog& log) {
  RunTotals totals;
  totals.total_ps = log.end_ps;
  totals.critical_device = last_to_finish(log.device_end_ps);
  const auto critical = static_cast<std::size_t>(totals.critical_device);
  totals.exposed_communication_ps = at_or_zero(log.exposed_communication_ps, critical);
  totals.communication_in_flight_ps = at_or_zero(log.communication_in_flight_ps, critical);
  totals.overlapped_communication_ps = at_or_zero(log.overlapped_communication_ps, critical);
  totals.steps = std::max<int>(1, static_cast<int>(log.steps.size()));
  totals.step_ps = totals.total_ps / totals.steps;
  totals.compute_ps = critical < log.compute_ps.size() ? log.compute_ps[critical] : 0;
  totals.communication_ps = totals.total_ps - totals.compute_ps;
  totals.communication_share = totals.total_ps > 0 ? static_cast<double>(totals.communication_ps) /
                                                         static_cast<double>(totals.total_ps)
                                                   : 0.0;
  totals.collective_ps = log.collective_time_ps;
  for (std::size_t d = 0; d < log.memory.size(); ++d) {
    if (log.memory[d].peak_bytes > totals.peak_memory_bytes) {
      totals.peak_memory_bytes = log.memory[d].peak_bytes;
      totals.peak_memory_device = static_cast<int>(d);
    }
  }
  return totals;
}

void write_collectives_csv(std::ostream& out, const sim::CostLog& log) {
  out << "op,call,axes,dtype,shape,bytes,algorithm,groups,group_size,start_ps,end_ps,time_ps,"
         "algbw_GBps,busbw_GBps,issue_ps\n";
  for (const sim::CollectiveRecord& r : log.collectives) {
    out << r.op << ',' << csv_field(r.call) << ',' << csv_field(r.axes) << ',' << r.dtype << ','
        << csv_field(r.shape) << ',' << r.bytes << ',' << r.algorithm << ',' << r.groups << ','
        << r.group_size << ',' << r.start_ps << ',' << r.end_ps << ','
        << r.end_ps - r.start_ps
        // Fixed notation with 3 decimals: the same text on every machine.
        << fmt::format(",{:.3f},{:.3f},{}\n", r.algbw_bytes_per_s / 1e9, r.busbw_bytes_per_s / 1e9,
                       r.issue_ps);
  }
}

void write_devices_csv(std::ostream& out, const sim::CostLog& log) {
  out << "device,peak_bytes,compute_ps,end_ps,exposed_communication_ps,"
         "communication_in_flight_ps,overlapped_communication_ps\n";
  for (std::size_t d = 0; d < log.memory.size(); ++d) {
    out << d << ',' << log.memory[d].peak_bytes << ',' << at_or_zero(log.compute_ps, d) << ','
        << at_or_zero(log.device_end_ps, d) << ',' << at_or_zero(log.exposed_communication_ps, d)
        << ',' << at_or_zero(log.communication_in_flight_ps, d) << ','
        << at_or_zero(log.overlapped_communication_ps, d) << '\n';
  }
}

nlohmann::json run_report_json(const sim::CostLog& log, const std::string& machine_name) {
  const RunTotals totals = run_totals(log);
  nlohmann::json collectives = nlohmann::json::array();
  for (const sim::CollectiveRecord& r : log.collectives) {
    collectives.push_back({{"op", r.op},
                           {"call", r.call},
                           {"axes", r.axes},
                           {"dtype", r.dtype},
                           {"shape", r.shape},
                           {"bytes", r.bytes},
                           {"algorithm", r.algorithm},
                           {"algorithm_note", r.algorithm_note},
                           {"groups", r.groups},
                           {"group_size", r.group_size},
                           {"start_ps", r.start_ps},
                           {"end_ps", r.end_ps},
                           {"time_ps", r.end_ps - r.start_ps},
                           {"algbw_GBps", r.algbw_bytes_per_s / 1e9},
                           {"busbw_GBps", r.busbw_bytes_per_s / 1e9},
                           {"issue_ps", r.issue_ps}});
  }
  nlohmann::json devices = nlohmann::json::array();
  for (std::size_t d = 0; d < log.memory.size(); ++d) {
    devices.push_back({{"device", d},
                       {"peak_memory_bytes", log.memory[d].peak_bytes},
                       {"compute_ps", d < log.compute_ps.size() ? log.compute_ps[d] : 0},
                       {"end_ps", d < log.device_end_ps.size() ? log.device_end_ps[d] : 0},
                       {"exposed_communication_ps", at_or_zero(log.exposed_communication_ps, d)},
                       {"communication_in_flight_ps",
                        at_or_zero(log.communication_in_flight_ps, d)},
                       {"overlapped_communication_ps",
                        at_or_zero(log.overlapped_communication_ps, d)}});
  }
  nlohmann::json steps = nlohmann::json::array();
  for (const StepTotals& step : step_totals(log)) {
    steps.push_back({{"start_ps", step.start_ps},
                     {"time_ps", step.time_ps},
                     {"critical_device", step.critical_device},
                     {"exposed_communication_ps", step.exposed_communication_ps},
                     {"overlapped_communication_ps", step.overlapped_communication_ps}});
  }
  return {{"machine", machine_name},
          {"totals",
           {{"total_ps", totals.total_ps},
            {"critical_device", totals.critical_device},
            {"compute_ps", totals.compute_ps},
            {"communication_ps", totals.communication_ps},
            {"communication_share", totals.communication_share},
            {"collective_ps", totals.collective_ps},
            {"peak_memory_bytes", totals.peak_memory_bytes},
            {"peak_memory_device", totals.peak_memory_device},
            {"link_messages", log.link_transfers},
            {"closed_form_groups", log.closed_form_groups},
            {"steps", totals.steps},
            {"step_ps", totals.step_ps},
            {"exposed_communication_ps", totals.exposed_communication_ps},
            {"communication_in_flight_ps", totals.communication_in_flight_ps},
            {"overlapped_communication_ps", totals.overlapped_communication_ps}}},
          {"collectives", std::move(collectives)},
          {"devices", std::move(devices)},
          {"steps", std::move(steps)}};
}

}  // namespace spmd::traces
