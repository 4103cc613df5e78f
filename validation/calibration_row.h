#pragma once
// One row of a calibration file (docs/validation.md): a collective that nccl-tests or
// rccl-tests timed on a real machine, the machine described in words. Reading a row checks every
// field it uses and derives the measured time from whichever figure the source printed; the
// machine's words become a Fabric in validation/calibration_machine.h.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "cost_model/collective_timing.h"
#include "support/csv_table.h"
#include "support/name_table.h"  // ascii_lowercase: the columns' texts match in any case

namespace spmd {

// Whether an interconnect text says the nodes are in different NVLink domains: "distinct",
// "separate" or "different NVLink domains", or "cross-domain" (any case).
bool separate_nvlink_domains(std::string_view interconnect);

// The machine as a row describes it (the columns gpu, gpus_total, nodes, gpus_per_node, nic,
// and interconnect).
struct MachineDescription {
  std::string gpu;
  int gpus_total = 0;
  int nodes = 0;
  int gpus_per_node = 0;
  std::string nic;
  // The interconnect column as written. It is read for two things: whether the nodes sit in
  // different NVLink domains, and the network between nodes where the nic text names none. Its
  // wording may vary between the rows of one machine, so only the first takes part in comparing
  // them.
  std::string interconnect;
  // The row's nodes sit in different NVLink domains, as two trays of different NVL72 racks do:
  // they talk over their NICs only.
  bool nodes_in_separate_nvlink_domains() const { return separate_nvlink_domains(interconnect); }
  bool operator==(const MachineDescription& other) const {
    return std::tie(gpu, gpus_total, nodes, gpus_per_node, nic) ==
               std::tie(other.gpu, other.gpus_total, other.nodes, other.gpus_per_node, other.nic) &&
           nodes_in_separate_nvlink_domains() == other.nodes_in_separate_nvlink_domains();
  }
};

// How a run launched its collectives, as the notes column quotes nccl-tests' command line or
// header: `-g N` or `--ngpus N` (or the header's "nGpus N") GPUs driven by one process, and
// `-G N` or `--cudagraph N` with N > 0 (or the header's "graph: 1") a graph launch. The flags
// are case-sensitive, as nccl-tests reads them; a note without them is one GPU per process and
// no graph.
struct CalibrationLaunch {
  int gpus_per_process = 1;
  bool graph_launch = false;
};

struct CalibrationRow {
  int line = 0;  // in the file, for messages
  std::string config_id;
  MachineDescription machine;
  std::string op_name;  // as written ("all_reduce")
  cost_model::TimedOp op = cost_model::TimedOp::all_reduce;
  std::int64_t size_bytes = 0;             // nccl-tests' size convention (TimingRequest::bytes)
  int element_bytes = 4;                   // from the dtype column (element_bytes_of_dtype)
  std::optional<double> measured_time_us;  // none: the row has no usable figure
  std::optional<cost_model::LibraryAlgorithm> forced_algorithm;
  std::optional<cost_model::Protocol> forced_protocol;
  // How the run launched its collectives, from the notes column (calibration_launch).
  CalibrationLaunch launch;
  // The run turned NVLS off (the nvls column, nvls_turned_off): the switches do not reduce.
  bool nvls_off = false;
  bool in_place = false;  // the in_or_out_of_place column starts with "in-place"
  std::string source;     // the source column's first word (where the figure was published)
  // Why the model cannot predict this row (an op or a forced algorithm it does not time);
  // empty when it can. Such rows are listed and left out of the figures, not errors.
  std::string not_predicted;
};

// The columns `spmdsim validate` needs; a file may have more (the calibration format has 21),
// and it reads nic, nccl_algo, nccl_proto and the others docs/validation.md names when present.
inline constexpr std::string_view kCalibrationColumnsText =
    "config_id, gpu, gpus_total, nodes, gpus_per_node, op, size_bytes and at least one of "
    "time_us, algbw_GBps and busbw_GBps";

// Every record of the table as a row, in file order; spmd::Error "FILE:LINE: COLUMN 'TEXT': ..."
// for the first bad field, or naming the missing columns.
std::vector<CalibrationRow> read_calibration_rows(const CsvTable& table);


// ---- The pieces of a row, each spmd::Error "COLUMN 'TEXT': expected ..." on bad text.

// all_reduce, all_gather, reduce_scatter, broadcast, all_to_all; also without the underscores
// (nccl-tests' binary names: allreduce, alltoall) and in any case. reduce is timed as broadcast
// (the same ring, the other way) and sendrecv as a permute. None for nccl-tests' other ops
// (gather, scatter, hypercube), which the model does not time.
std::optional<cost_model::TimedOp> calibration_op(std::string_view text);

// The size of one element of a row's dtype (nccl_type_bytes, validation/nccl_type_names.h); any
// other text, or none, is nccl-tests' default, float.
int element_bytes_of_dtype(std::string_view text);

// nccl-tests' bus bandwidth factor, busbw = algbw x factor: all_reduce 2(n-1)/n; all_gather,
// reduce_scatter and all_to_all (n-1)/n; broadcast 1 (nccl-tests src/*.cu, getBw).
double bus_factor(cost_model::TimedOp op, int ranks);

// The figures a row may give (time_us, algbw_GBps, busbw_GBps): empty or zero (nccl-tests prints
// 0.00 GB/s for tiny sizes) means absent; negative or not a number is an error.
struct MeasuredFigures {
  std::optional<double> time_us;
  std::optional<double> algbw_gbps;  // 1e9 bytes/s
  std::optional<double> busbw_gbps;
};
MeasuredFigures measured_figures(std::string_view time_us, std::string_view algbw_gbps,
                                 std::string_view busbw_gbps);
// time_us when given; else size / algbw; else size / (busbw / bus_factor). None when the row has
// none of them (or only busbw with a bus factor of 0, an all-reduce of one rank).
std::optional<double> measured_time_us(const MeasuredFigures& figures, cost_model::TimedOp op,
                                       int ranks, std::int64_t size_bytes);

// The algorithm the nccl_algo column forces: "Ring", "Ring (env)", "Tree (env)", an algorithm
// marked forced with what NCCL's log showed after it force one; empty, "default ..." and "... requested ...;
// actual algo unknown" force none. Any other text is an error.
std::optional<cost_model::LibraryAlgorithm> forced_algorithm(std::string_view nccl_algo);
// The notes' launch flags (CalibrationLaunch above).
CalibrationLaunch calibration_launch(std::string_view notes);
// Whether the nvls column says the run turned NVLS off: text starting with "off" or "disabled",
// or naming NCCL_NVLS_ENABLE=0, in any case. Any other text ("on", "default ...", "n/a ...",
// empty) leaves the machine's NVLS as it is.
bool nvls_turned_off(std::string_view nvls);

// The protocol the nccl_proto column forces ("LL", "LL128", "Simple", "SIMPLE"); empty and
// "default ..." force none, and so does any text when nccl_algo says "log shows": the column
// then records the protocol NCCL's log showed, not one the run forced.
std::optional<cost_model::Protocol> forced_protocol(std::string_view nccl_proto,
                                                    std::string_view nccl_algo);

}  // namespace spmd
