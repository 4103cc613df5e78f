#include "sim/cost_log.h"

#include <algorithm>

#include "support/checked_math.h"

namespace spmd::sim {

double bus_bandwidth_factor(const std::string& op, int n) {
  if (n <= 1) return 0.0;
  const double ranks = n;
  if (op == "psum" || op == "pmean" || op == "pmax" || op == "pmin") {
    return 2.0 * (ranks - 1) / ranks;  // AllReduce
  }
  if (op == "psum_scatter" || op == "all_gather" || op == "all_to_all") {
    return (ranks - 1) / ranks;  // ReduceScatter, AllGather, AlltoAll
  }
  return 1.0;  // ppermute (SendRecv), broadcast
}

void set_bandwidths(CollectiveRecord& record) {
  const std::int64_t time_ps = record.end_ps - record.start_ps;
  if (time_ps <= 0) {
    record.algbw_bytes_per_s = record.busbw_bytes_per_s = 0;
    return;
  }
  record.algbw_bytes_per_s = static_cast<double>(record.bytes) / (static_cast<double>(time_ps) * 1e-12);
  record.busbw_bytes_per_s =
      record.algbw_bytes_per_s * bus_bandwidth_factor(record.op, record.group_size);
}

}  // namespace spmd::sim

namespace spmd::sim {

namespace {

// Logs built by hand (tests) may leave the per-device figures out.
std::int64_t at_or_zero(const std::vector<std::int64_t>& values, std::size_t i) {
  return i < values.size() ? values[i] : 0;
}

}  // namespace

void append_run(CostLog& total, const CostLog& next) {
  const std::int64_t offset_ps = total.end_ps;
  const int first_index = static_cast<int>(total.collective_count);
  const int first_record = static_cast<int>(total.collectives.size());
  for (CollectiveRecord record : next.collectives) {
    record.index += first_index;
    record.issue_ps += offset_ps;
    record.start_ps += offset_ps;
    record.end_ps += offset_ps;
    total.collectives.push_back(std::move(record));
  }
  for (ComputeSpan span : next.compute_spans) {
    span.start_ps += offset_ps;
    span.end_ps += offset_ps;
    total.compute_spans.push_back(span);
  }
  for (LinkTransferRecord transfer : next.transfers) {
    transfer.collective += first_record;
    transfer.start_ps += offset_ps;
    transfer.end_ps += offset_ps;
    total.transfers.push_back(transfer);
  }
  total.transfers_truncated = total.transfers_truncated || next.transfers_truncated;
  total.compute_spans_truncated = total.compute_spans_truncated || next.compute_spans_truncated;
  total.collective_count += next.collective_count;
  total.collective_time_ps = checked_add(total.collective_time_ps, next.collective_time_ps, [] {
    return std::string("the joined runs' collective time in ps");
  });
  if (total.placement.empty()) total.placement = next.placement;
  const std::size_t devices = next.memory.size();
  total.memory.resize(std::max(total.memory.size(), devices));
  for (auto* per_device : {&total.compute_ps, &total.device_end_ps,
                           &total.exposed_communication_ps, &total.communication_in_flight_ps,
                           &total.overlapped_communication_ps}) {
    per_device->resize(std::max(per_device->size(), devices), 0);
  }
  for (std::size_t d = 0; d < devices; ++d) {
    DeviceMemory& memory = total.memory[d];
    memory.peak_bytes = std::max(memory.peak_bytes, next.memory[d].peak_bytes);
    memory.timeline_truncated = memory.timeline_truncated || next.memory[d].timeline_truncated;
    for (MemoryPoint point : next.memory[d].timeline) {
      point.time_ps += offset_ps;
      memory.timeline.push_back(point);
    }
    total.compute_ps[d] += next.compute_ps.at(d);
    total.device_end_ps[d] = offset_ps + next.device_end_ps.at(d);
    total.exposed_communication_ps[d] += at_or_zero(next.exposed_communication_ps, d);
    total.communication_in_flight_ps[d] += at_or_zero(next.communication_in_flight_ps, d);
    total.overlapped_communication_ps[d] += at_or_zero(next.overlapped_communication_ps, d);
  }
  for (StepRecord step : next.steps) {
    step.start_ps += offset_ps;
    step.end_ps += offset_ps;
    for (std::int64_t& end : step.device_end_ps) end += offset_ps;
    total.steps.push_back(std::move(step));
  }
  for (FaultEvent fault : next.faults) {
    fault.at_ps += offset_ps;
    // A fault at the boundary of two runs lies in both: keep it once.
    const bool seen = std::any_of(total.faults.begin(), total.faults.end(), [&](const FaultEvent& f) {
      return f.at_ps == fault.at_ps && f.description == fault.description;
    });
    if (!seen) total.faults.push_back(std::move(fault));
  }
  total.end_ps = offset_ps + next.end_ps;
  total.link_transfers += next.link_transfers;
  total.closed_form_groups += next.closed_form_groups;
}

}  // namespace spmd::sim
