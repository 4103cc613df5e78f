#include "sim/cost_log.h"

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
