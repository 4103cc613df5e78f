#include "traces/run_report.h"

#include <fmt/format.h>

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

}  // namespace

RunTotals run_totals(const sim::CostLog& log) {
  RunTotals totals;
  totals.total_ps = log.end_ps;
  for (std::size_t d = 0; d < log.device_end_ps.size(); ++d) {
    if (log.device_end_ps[d] >
        log.device_end_ps[static_cast<std::size_t>(totals.critical_device)]) {
      totals.critical_device = static_cast<int>(d);
    }
  }
  const auto critical = static_cast<std::size_t>(totals.critical_device);
  totals.compute_ps = critical < log.compute_ps.size() ? log.compute_ps[critical] : 0;
  totals.communication_ps = totals.total_ps - totals.compute_ps;
  totals.communication_share = totals.total_ps > 0 ? static_cast<double>(totals.communication_ps) /
                                                         static_cast<double>(totals.total_ps)
                                                   : 0.0;
  for (const sim::CollectiveRecord& record : log.collectives) {
    totals.collective_ps += record.end_ps - record.start_ps;
  }
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
         "algbw_GBps,busbw_GBps\n";
  for (const sim::CollectiveRecord& r : log.collectives) {
    out << r.op << ',' << csv_field(r.call) << ',' << csv_field(r.axes) << ',' << r.dtype << ','
        << csv_field(r.shape) << ',' << r.bytes << ',' << r.algorithm << ',' << r.groups << ','
        << r.group_size << ',' << r.start_ps << ',' << r.end_ps << ','
        << r.end_ps - r.start_ps
        // Fixed notation with 3 decimals: the same text on every machine.
        << fmt::format(",{:.3f},{:.3f}\n", r.algbw_bytes_per_s / 1e9, r.busbw_bytes_per_s / 1e9);
  }
}

void write_devices_csv(std::ostream& out, const sim::CostLog& log) {
  out << "device,peak_bytes,compute_ps,end_ps\n";
  for (std::size_t d = 0; d < log.memory.size(); ++d) {
    out << d << ',' << log.memory[d].peak_bytes << ','
        << (d < log.compute_ps.size() ? log.compute_ps[d] : 0) << ','
        << (d < log.device_end_ps.size() ? log.device_end_ps[d] : 0) << '\n';
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
                           {"busbw_GBps", r.busbw_bytes_per_s / 1e9}});
  }
  nlohmann::json devices = nlohmann::json::array();
  for (std::size_t d = 0; d < log.memory.size(); ++d) {
    devices.push_back({{"device", d},
                       {"peak_memory_bytes", log.memory[d].peak_bytes},
                       {"compute_ps", d < log.compute_ps.size() ? log.compute_ps[d] : 0},
                       {"end_ps", d < log.device_end_ps.size() ? log.device_end_ps[d] : 0}});
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
            {"closed_form_groups", log.closed_form_groups}}},
          {"collectives", std::move(collectives)},
          {"devices", std::move(devices)}};
}

}  // namespace spmd::traces
