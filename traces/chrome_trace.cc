#include "traces/chrome_trace.h"

#include <fmt/format.h>

#include <cstdint>
#include <vector>

namespace spmd::traces {
namespace {

using nlohmann::json;

constexpr int kComputeThread = 0;
constexpr int kCollectiveThread = 1;

// Trace Event timestamps are microseconds; ours are integer picoseconds. A double holds every
// picosecond count below 2^53 exactly, and the division by 1e6 rounds the same way everywhere.
double microseconds(std::int64_t ps) { return static_cast<double>(ps) / 1e6; }

json metadata(const char* name, int pid, int tid, const std::string& value) {
  return {{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"args", {{"name", value}}}};
}

json slice(const std::string& name, const char* category, int pid, int tid, std::int64_t start_ps,
           std::int64_t end_ps, json args) {
  return {{"ph", "X"},
          {"name", name},
          {"cat", category},
          {"pid", pid},
          {"tid", tid},
          {"ts", microseconds(start_ps)},
          {"dur", microseconds(end_ps - start_ps)},
          {"args", std::move(args)}};
}

void add_device_tracks(json& events, int device) {
  events.push_back(metadata("process_name", device, 0, fmt::format("device {}", device)));
  events.push_back({{"ph", "M"},
                    {"name", "process_sort_index"},
                    {"pid", device},
                    {"tid", 0},
                    {"args", {{"sort_index", device}}}});
  events.push_back(metadata("thread_name", device, kComputeThread, "compute"));
  events.push_back(metadata("thread_name", device, kCollectiveThread, "collectives"));
}

json collective_args(const sim::CollectiveRecord& record) {
  return {{"op", record.op},
          {"bytes", record.bytes},
          {"dtype", record.dtype},
          {"shape", record.shape},
          {"algorithm", record.algorithm},
          {"group_size", record.group_size},
          {"algbw_GBps", record.algbw_bytes_per_s / 1e9},
          {"busbw_GBps", record.busbw_bytes_per_s / 1e9}};
}

// The log keeps compute spans in the order they were charged; the trace lists them by device.
std::vector<std::vector<const sim::ComputeSpan*>> spans_by_device(const sim::CostLog& log,
                                                                  int devices) {
  std::vector<std::vector<const sim::ComputeSpan*>> by_device(static_cast<std::size_t>(devices));
  for (const sim::ComputeSpan& span : log.compute_spans) {
    if (span.device >= 0 && span.device < devices) {
      by_device[static_cast<std::size_t>(span.device)].push_back(&span);
    }
  }
  return by_device;
}

void add_device_events(json& events, const sim::CostLog& log, int device,
                       const std::vector<const sim::ComputeSpan*>& compute_spans) {
  for (const sim::ComputeSpan* span_pointer : compute_spans) {
    const sim::ComputeSpan& span = *span_pointer;
    events.push_back(slice("compute", "compute", device, kComputeThread, span.start_ps, span.end_ps,
                           {{"flops", span.flops}, {"bytes", span.bytes}}));
  }
  // Every device of a mesh takes part in every collective (in one group or another).
  for (const sim::CollectiveRecord& record : log.collectives) {
    events.push_back(slice(record.call, "collective", device, kCollectiveThread, record.start_ps,
                           record.end_ps, collective_args(record)));
  }
  for (const sim::MemoryPoint& point : log.memory.at(static_cast<std::size_t>(device)).timeline) {
    events.push_back({{"ph", "C"},
                      {"name", "memory in use"},
                      {"pid", device},
                      {"ts", microseconds(point.time_ps)},
                      {"args", {{"bytes", point.bytes_in_use}}}});
  }
}

// A flow arrow per message: "s" on the sender at departure, "f" on the receiver at arrival,
// both inside the collective's slice on the collectives thread.
void add_flows(json& events, const sim::CostLog& log) {
  std::int64_t id = 0;
  for (const sim::LinkTransferRecord& t : log.transfers) {
    const std::string name = log.collectives.at(static_cast<std::size_t>(t.collective)).call;
    const json args = {{"bytes", t.bytes}};
    events.push_back({{"ph", "s"},
                      {"name", name},
                      {"cat", "link"},
                      {"id", id},
                      {"pid", t.from_device},
                      {"tid", kCollectiveThread},
                      {"ts", microseconds(t.start_ps)},
                      {"args", args}});
    events.push_back({{"ph", "f"},
                      {"bp", "e"},
                      {"name", name},
                      {"cat", "link"},
                      {"id", id},
                      {"pid", t.to_device},
                      {"tid", kCollectiveThread},
                      {"ts", microseconds(t.end_ps)},
                      {"args", args}});
    ++id;
  }
}

}  // namespace

json chrome_trace(const sim::CostLog& log, const TraceLabels& labels) {
  json events = json::array();
  for (int d = 0; d < labels.devices; ++d) add_device_tracks(events, d);
  const auto compute_spans = spans_by_device(log, labels.devices);
  for (int d = 0; d < labels.devices; ++d) {
    add_device_events(events, log, d, compute_spans[static_cast<std::size_t>(d)]);
  }
  add_flows(events, log);
  return {{"displayTimeUnit", "ns"},
          {"otherData",
           {{"machine", labels.machine_name},
            {"devices", labels.devices},
            {"end_ps", log.end_ps},
            {"link_messages_recorded", log.transfers.size()},
            {"link_messages_truncated", log.transfers_truncated}}},
          {"traceEvents", std::move(events)}};
}

std::string chrome_trace_text(const sim::CostLog& log, const TraceLabels& labels) {
  const json trace = chrome_trace(log, labels);
  std::string text = "{\"displayTimeUnit\": \"ns\",\n\"otherData\": " + trace["otherData"].dump() +
                     ",\n\"traceEvents\": [\n";
  const json& events = trace["traceEvents"];
  for (std::size_t i = 0; i < events.size(); ++i) {
    text += events[i].dump();
    text += i + 1 < events.size() ? ",\n" : "\n";
  }
  text += "]}\n";
  return text;
}

}  // namespace spmd::traces
