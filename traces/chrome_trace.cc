#include "traces/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace spmd::traces {
namespace {

using nlohmann::json;

constexpr int kComputeThread = 0;
constexpr int kCollectiveThread = 1;  // the first collectives track; lane k is thread 1 + k

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

// Collectives in flight at once (started and not yet finished) cannot share a track: Trace Event
// slices on one thread must nest. Each collective takes the first lane free at its start, in
// the log's order; a program of blocking collectives uses one lane.
std::vector<int> collective_lanes(const sim::CostLog& log, int& lane_count) {
  std::vector<int> lanes;
  std::vector<std::int64_t> lane_free_ps;
  for (const sim::CollectiveRecord& record : log.collectives) {
    std::size_t lane = 0;
    while (lane < lane_free_ps.size() && lane_free_ps[lane] > record.start_ps) ++lane;
    if (lane == lane_free_ps.size()) lane_free_ps.push_back(0);
    lane_free_ps[lane] = record.end_ps;
    lanes.push_back(static_cast<int>(lane));
  }
  lane_count = std::max<int>(1, static_cast<int>(lane_free_ps.size()));
  return lanes;
}

void add_device_tracks(json& events, int device, int collective_lanes) {
  events.push_back(metadata("process_name", device, 0, fmt::format("device {}", device)));
  events.push_back({{"ph", "M"},
                    {"name", "process_sort_index"},
                    {"pid", device},
                    {"tid", 0},
                    {"args", {{"sort_index", device}}}});
  events.push_back(metadata("thread_name", device, kComputeThread, "compute"));
  events.push_back(metadata("thread_name", device, kCollectiveThread, "collectives"));
  for (int lane = 1; lane < collective_lanes; ++lane) {
    events.push_back(metadata("thread_name", device, kCollectiveThread + lane,
                              fmt::format("collectives {}", lane + 1)));
  }
}

json collective_args(const sim::CollectiveRecord& record) {
  return {{"op", record.op},
          {"bytes", record.bytes},
          {"dtype", record.dtype},
          {"shape", record.shape},
          {"algorithm", record.algorithm},
          {"group_size", record.group_size},
          {"algbw_GBps", record.algbw_bytes_per_s / 1e9},
          {"busbw_GBps", record.busbw_bytes_per_s / 1e9},
          {"issue_us", microseconds(record.issue_ps)}};
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
                       const std::vector<const sim::ComputeSpan*>& compute_spans,
                       const std::vector<int>& lanes) {
  for (const sim::ComputeSpan* span_pointer : compute_spans) {
    const sim::ComputeSpan& span = *span_pointer;
    events.push_back(slice("compute", "compute", device, kComputeThread, span.start_ps, span.end_ps,
                           {{"flops", span.flops}, {"bytes", span.bytes}}));
  }
  // Every device of a mesh takes part in every collective (in one group or another).
  for (std::size_t i = 0; i < log.collectives.size(); ++i) {
    const sim::CollectiveRecord& record = log.collectives[i];
    events.push_back(slice(record.call, "collective", device, kCollectiveThread + lanes[i],
                           record.start_ps, record.end_ps, collective_args(record)));
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
void add_flows(json& events, const sim::CostLog& log, const std::vector<int>& lanes) {
  std::int64_t id = 0;
  for (const sim::LinkTransferRecord& t : log.transfers) {
    const auto c = static_cast<std::size_t>(t.collective);
    const std::string name = log.collectives.at(c).call;
    const int thread = kCollectiveThread + lanes.at(c);
    const json args = {{"bytes", t.bytes}};
    events.push_back({{"ph", "s"},
                      {"name", name},
                      {"cat", "link"},
                      {"id", id},
                      {"pid", t.from_device},
                      {"tid", thread},
                      {"ts", microseconds(t.start_ps)},
                      {"args", args}});
    events.push_back({{"ph", "f"},
                      {"bp", "e"},
                      {"name", name},
                      {"cat", "link"},
                      {"id", id},
                      {"pid", t.to_device},
                      {"tid", thread},
                      {"ts", microseconds(t.end_ps)},
                      {"args", args}});
    ++id;
  }
}

// A fault (sim/faults.h) as an instant event: on its device's process for device faults, across
// the whole trace for link faults.
void add_faults(json& events, const sim::CostLog& log, int devices) {
  for (const sim::FaultEvent& fault : log.faults) {
    const bool on_device = fault.device >= 0 && fault.device < devices;
    events.push_back({{"ph", "i"},
                      {"name", fault.description},
                      {"cat", "fault"},
                      {"s", on_device ? "p" : "g"},
                      {"pid", on_device ? fault.device : 0},
                      {"tid", kComputeThread},
                      {"ts", microseconds(fault.at_ps)},
                      {"args", {{"kind", fault.kind}}}});
  }
}

}  // namespace

json chrome_trace(const sim::CostLog& log, const TraceLabels& labels) {
  json events = json::array();
  int lane_count = 1;
  const std::vector<int> lanes = collective_lanes(log, lane_count);
  for (int d = 0; d < labels.devices; ++d) add_device_tracks(events, d, lane_count);
  const auto compute_spans = spans_by_device(log, labels.devices);
  for (int d = 0; d < labels.devices; ++d) {
    add_device_events(events, log, d, compute_spans[static_cast<std::size_t>(d)], lanes);
  }
  add_flows(events, log, lanes);
  add_faults(events, log, labels.devices);
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
