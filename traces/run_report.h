#pragma once
// Reports of a simulated run: one row per collective (op, axes, dtype, bytes, algorithm, start,
// end, time, algbw, busbw, nccl-tests' definitions, issue time), each device's memory peak,
// compute and communication figures, one row per step, and totals: the run's time, how much of
// it the critical device spent outside its own compute, the communication it waited for
// (exposed) and the communication its compute hid (overlapped).

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sim/cost_log.h"

namespace spmd::traces {

struct RunTotals {
  std::int64_t total_ps = 0;            // when the last device finished
  int critical_device = 0;              // the device that finished last (lowest id on ties)
  std::int64_t compute_ps = 0;          // its local compute
  std::int64_t communication_ps = 0;    // the rest: in collectives or waiting for them
  double communication_share = 0;       // communication_ps / total_ps
  std::int64_t collective_ps = 0;       // summed over collective calls, end - start
  std::int64_t peak_memory_bytes = 0;   // the largest device peak
  int peak_memory_device = 0;
  // The critical device's time blocked in waits for collectives (sim::CostLog).
  std::int64_t exposed_communication_ps = 0;
  // The critical device's time with a collective in flight, and the part compute covered.
  std::int64_t communication_in_flight_ps = 0;
  std::int64_t overlapped_communication_ps = 0;
  int steps = 1;           // Machine::run calls joined in the log (at least 1)
  std::int64_t step_ps = 0;  // total_ps / steps
};

// One step's figures on its critical device (the last to finish in the step).
struct StepTotals {
  std::int64_t start_ps = 0;
  std::int64_t time_ps = 0;
  int critical_device = 0;
  std::int64_t exposed_communication_ps = 0;
  std::int64_t overlapped_communication_ps = 0;
};
std::vector<StepTotals> step_totals(const sim::CostLog& log);

RunTotals run_totals(const sim::CostLog& log);

// CSV, header first: op,call,axes,dtype,shape,bytes,algorithm,groups,group_size,start_ps,
// end_ps,time_ps,algbw_GBps,busbw_GBps,issue_ps (GB = 1e9 bytes, as nccl-tests).
void write_collectives_csv(std::ostream& out, const sim::CostLog& log);
// CSV: device,peak_bytes,compute_ps,end_ps,exposed_communication_ps,
// communication_in_flight_ps,overlapped_communication_ps.
void write_devices_csv(std::ostream& out, const sim::CostLog& log);
// Everything above in one JSON object: {"machine", "totals", "collectives", "devices",
// "steps"}.
nlohmann::json run_report_json(const sim::CostLog& log, const std::string& machine_name);

}  // namespace spmd::traces
