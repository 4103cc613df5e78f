#include "traces/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

namespace spmd::traces {
namespace {

using nlohmann::json;

// Where events go: a JSON array (chrome_trace), or straight into the text, one line each
// (chrome_trace_text), so that a large trace never holds its events as JSON values at once.
class EventSink {
 public:
  explicit EventSink(json* array) : array_(array) {}
  explicit EventSink(std::string* text) : text_(text) {}
  void push_back(json event) {
    if (array_ != nullptr) {
      array_->push_back(std::move(event));
      return;
    }
    if (count_ > 0) *text_ += ",\n";
    *text_ += event.dump();
    ++count_;
  }

 private:
  json* array_ = nullptr;
  std::string* text_ = nullptr;
  std::size_t count_ = 0;
};

constexpr int kComputeThread = 0;     // without groups: each device's process
constexpr int kCollectiveThread = 1;  // the first collectives track; lane k is thread 1 + k

// Trace Event timestamps are microseconds; ours are integer picoseconds. A double holds every
// picosecond count below 2^53 exactly, and the division by 1e6 rounds the same way everywhere.
double microseconds(std::int64_t ps) { return static_cast<double>(ps) / 1e6; }

json metadata(const char* name, int pid, int tid, const std::string& value) {
  return {{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"args", {{"name", value}}}};
}

json sort_index(const char* name, int pid, int tid, int index) {
  return {{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"args", {{"sort_index", index}}}};
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

bool same_spans(const std::vector<const sim::ComputeSpan*>& a,
                const std::vector<const sim::ComputeSpan*>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const sim::ComputeSpan* x, const sim::ComputeSpan* y) {
                      return x->start_ps == y->start_ps && x->end_ps == y->end_ps &&
                             x->flops == y->flops && x->bytes == y->bytes;
                    });
}

bool same_memory(const std::vector<sim::MemoryPoint>& a, const std::vector<sim::MemoryPoint>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const sim::MemoryPoint& x, const sim::MemoryPoint& y) {
                      return x.time_ps == y.time_ps && x.bytes_in_use == y.bytes_in_use;
                    });
}

// Where each device's events go: its own process (no groups), or its group's process with a
// thread after the group's collectives lanes. In a group, consecutive devices whose compute and
// memory are the same to the picosecond and byte (the tensor-parallel devices of a node, say)
// share one thread, "devices 8-15": the trace shows what differs, and nothing is lost.
class TrackLayout {
 public:
  TrackLayout(const sim::CostLog& log, int devices, const TrackGroups& groups, int lane_count)
      : devices_(devices),
        per_process_(std::max(1, groups.devices_per_group)),
        kind_(groups.kind),
        lane_count_(lane_count),
        has_arrows_(!log.transfers.empty()),
        spans_(spans_by_device(log, devices)),
        first_alike_(static_cast<std::size_t>(devices)) {
    for (int d = 0; d < devices; ++d) {
      const bool joins_previous = grouped() && d % per_process_ != 0 &&
                                  same_spans(spans(d), spans(d - 1)) &&
                                  same_memory(memory(log, d), memory(log, d - 1));
      first_alike_[static_cast<std::size_t>(d)] = joins_previous ? first_alike(d - 1) : d;
    }
  }

  bool grouped() const { return per_process_ > 1; }
  int processes() const { return (devices_ + per_process_ - 1) / per_process_; }
  // Grouped and without arrows, the collectives are drawn once for the whole run, in a process of
  // their own after the groups: a record has one start and end for every device, and with no
  // arrow to bind to a group's track, repeating it in each group would only multiply the file.
  bool shared_collectives() const { return grouped() && !has_arrows_; }
  int shared_collectives_process() const { return processes(); }
  int process_of(int device) const { return device / per_process_; }
  int first_device(int process) const { return process * per_process_; }
  int end_device(int process) const { return std::min(devices_, (process + 1) * per_process_); }
  int lane_count() const { return lane_count_; }
  const std::vector<const sim::ComputeSpan*>& spans(int device) const {
    return spans_[static_cast<std::size_t>(device)];
  }
  // The first device of the run of alike devices `device` belongs to: its thread's owner.
  int first_alike(int device) const { return first_alike_[static_cast<std::size_t>(device)]; }
  int last_alike(int first) const {
    int last = first;
    while (last + 1 < devices_ && first_alike(last + 1) == first) ++last;
    return last;
  }
  int compute_thread(int device) const {
    return grouped() ? kCollectiveThread + lane_count_ + first_alike(device) % per_process_
                     : kComputeThread;
  }
  std::string process_name(int process) const {
    if (!grouped()) return fmt::format("device {}", process);
    return fmt::format("{} {} (devices {}-{})", kind_, process, first_device(process),
                       end_device(process) - 1);
  }
  // "devices 8-15" for a run of alike devices, "device 8" for one.
  std::string devices_name(int first) const {
    const int last = last_alike(first);
    return last == first ? fmt::format("device {}", first)
                         : fmt::format("devices {}-{}", first, last);
  }
  std::string compute_thread_name(int first) const {
    return grouped() ? devices_name(first) : "compute";
  }
  std::string memory_counter_name(int first) const {
    return grouped() ? devices_name(first) + " memory in use" : "memory in use";
  }

 private:
  static const std::vector<sim::MemoryPoint>& memory(const sim::CostLog& log, int device) {
    return log.memory.at(static_cast<std::size_t>(device)).timeline;
  }

  int devices_;
  int per_process_;
  std::string kind_;
  int lane_count_;
  bool has_arrows_;
  std::vector<std::vector<const sim::ComputeSpan*>> spans_;
  std::vector<int> first_alike_;
};

void add_lane_threads(EventSink& events, int process, int lane_count, bool sorted) {
  for (int lane = 0; lane < lane_count; ++lane) {
    const int thread = kCollectiveThread + lane;
    events.push_back(metadata("thread_name", process, thread,
                              lane == 0 ? "collectives" : fmt::format("collectives {}", lane + 1)));
    if (sorted) events.push_back(sort_index("thread_sort_index", process, thread, lane));
  }
}

void add_process_tracks(EventSink& events, const TrackLayout& layout, int process) {
  events.push_back(metadata("process_name", process, 0, layout.process_name(process)));
  events.push_back(sort_index("process_sort_index", process, 0, process));
  if (!layout.shared_collectives()) {
    add_lane_threads(events, process, layout.lane_count(), layout.grouped());
  }
  for (int d = layout.first_device(process); d < layout.end_device(process); ++d) {
    if (layout.first_alike(d) != d) continue;
    const int thread = layout.compute_thread(d);
    events.push_back(metadata("thread_name", process, thread, layout.compute_thread_name(d)));
    if (layout.grouped()) {
      events.push_back(sort_index("thread_sort_index", process, thread, layout.lane_count() + d));
    }
  }
}

// The process of the collectives drawn once, listed first.
void add_shared_collectives_tracks(EventSink& events, const TrackLayout& layout) {
  const int process = layout.shared_collectives_process();
  events.push_back(metadata("process_name", process, 0, "collectives (every device)"));
  events.push_back(sort_index("process_sort_index", process, 0, -1));
  add_lane_threads(events, process, layout.lane_count(), true);
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

void add_device_events(EventSink& events, const sim::CostLog& log, const TrackLayout& layout,
                       int device) {
  const int process = layout.process_of(device);
  for (const sim::ComputeSpan* span_pointer : layout.spans(device)) {
    const sim::ComputeSpan& span = *span_pointer;
    events.push_back(slice("compute", "compute", process, layout.compute_thread(device),
                           span.start_ps, span.end_ps,
                           {{"flops", span.flops}, {"bytes", span.bytes}}));
  }
  const std::string counter = layout.memory_counter_name(device);
  for (const sim::MemoryPoint& point : log.memory.at(static_cast<std::size_t>(device)).timeline) {
    events.push_back({{"ph", "C"},
                      {"name", counter},
                      {"pid", process},
                      {"ts", microseconds(point.time_ps)},
                      {"args", {{"bytes", point.bytes_in_use}}}});
  }
}

// Every device of a mesh takes part in every collective (in one group or another), and a
// collective's record holds one start and end for all: each process shows it once.
void add_collectives(EventSink& events, const sim::CostLog& log, int process,
                     const std::vector<int>& lanes) {
  for (std::size_t i = 0; i < log.collectives.size(); ++i) {
    const sim::CollectiveRecord& record = log.collectives[i];
    events.push_back(slice(record.call, "collective", process, kCollectiveThread + lanes[i],
                           record.start_ps, record.end_ps, collective_args(record)));
  }
}

// A flow arrow per message: "s" on the sender at departure, "f" on the receiver at arrival,
// both inside the collective's slice on the collectives thread of the device's process.
void add_flows(EventSink& events, const sim::CostLog& log, const TrackLayout& layout,
               const std::vector<int>& lanes) {
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
                      {"pid", layout.process_of(t.from_device)},
                      {"tid", thread},
                      {"ts", microseconds(t.start_ps)},
                      {"args", args}});
    events.push_back({{"ph", "f"},
                      {"bp", "e"},
                      {"name", name},
                      {"cat", "link"},
                      {"id", id},
                      {"pid", layout.process_of(t.to_device)},
                      {"tid", thread},
                      {"ts", microseconds(t.end_ps)},
                      {"args", args}});
    ++id;
  }
}

// A fault (sim/faults.h) as an instant event: on its device's compute track for device faults,
// across the whole trace for link faults.
void add_faults(EventSink& events, const sim::CostLog& log, const TrackLayout& layout, int devices) {
  for (const sim::FaultEvent& fault : log.faults) {
    const bool on_device = fault.device >= 0 && fault.device < devices;
    events.push_back({{"ph", "i"},
                      {"name", fault.description},
                      {"cat", "fault"},
                      {"s", on_device ? "p" : "g"},
                      {"pid", on_device ? layout.process_of(fault.device) : 0},
                      {"tid", on_device ? layout.compute_thread(fault.device) : kComputeThread},
                      {"ts", microseconds(fault.at_ps)},
                      {"args", {{"kind", fault.kind}}}});
  }
}

void add_events(EventSink& events, const sim::CostLog& log, const TraceLabels& labels) {
  int lane_count = 1;
  const std::vector<int> lanes = collective_lanes(log, lane_count);
  const TrackLayout layout(log, labels.devices, labels.groups, lane_count);
  if (layout.shared_collectives()) add_shared_collectives_tracks(events, layout);
  for (int p = 0; p < layout.processes(); ++p) add_process_tracks(events, layout, p);
  if (layout.shared_collectives()) {
    add_collectives(events, log, layout.shared_collectives_process(), lanes);
  }
  for (int p = 0; p < layout.processes(); ++p) {
    for (int d = layout.first_device(p); d < layout.end_device(p); ++d) {
      if (layout.first_alike(d) == d) add_device_events(events, log, layout, d);
    }
    if (!layout.shared_collectives()) add_collectives(events, log, p, lanes);
  }
  add_flows(events, log, layout, lanes);
  add_faults(events, log, layout, labels.devices);
}

json other_data(const sim::CostLog& log, const TraceLabels& labels) {
  return {{"machine", labels.machine_name},
          {"devices", labels.devices},
          {"end_ps", log.end_ps},
          {"link_messages", log.link_transfers},
          {"link_messages_recorded", log.transfers.size()},
          {"link_messages_truncated", log.transfers_truncated}};
}

}  // namespace

json chrome_trace(const sim::CostLog& log, const TraceLabels& labels) {
  json events = json::array();
  EventSink sink(&events);
  add_events(sink, log, labels);
  return {{"displayTimeUnit", "ns"},
          {"otherData", other_data(log, labels)},
          {"traceEvents", std::move(events)}};
}

std::string chrome_trace_text(const sim::CostLog& log, const TraceLabels& labels) {
  std::string text = "{\"displayTimeUnit\": \"ns\",\n\"otherData\": " +
                     other_data(log, labels).dump() + ",\n\"traceEvents\": [\n";
  EventSink sink(&text);
  add_events(sink, log, labels);
  text += "\n]}\n";
  return text;
}

}  // namespace spmd::traces
