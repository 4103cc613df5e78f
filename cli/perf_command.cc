#include "cli/perf_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <set>

#include "cli/algorithm_notes.h"
#include "cli/host_memory.h"
#include "cli/nccl_type_names.h"
#include "cli/placement_flag.h"
#include "cli/progress.h"
#include "reference/error.h"
#include "sim/broadcast_cost.h"
#include "sim/machine.h"
#include "sim/mesh_placement.h"
#include "support/checked_math.h"
#include "support/random_array.h"
#include "support/units.h"
#include "workloads/workload.h"

namespace spmd {
namespace {

// How the machine's fabric launches collectives, when not one process per GPU without a graph:
// ", one process per 8 GPUs, graph launch".
std::string launch_text(const sim::MachineSpec& spec) {
  if (!spec.fabric) return "";
  std::string text;
  if (spec.fabric->gpus_per_process > 1) {
    text += fmt::format(", one process per {} GPUs", spec.fabric->gpus_per_process);
  }
  if (spec.fabric->graph_launch) text += ", graph launch";
  return text;
}

// nccl-tests' sizes: a number with an optional K, M or G (powers of 1024), as in `-e 1G`; or any
// size the machine files accept ("64MiB", "1GB").
std::int64_t parse_size(const std::string& text, const std::string& flag) {
  static const std::string suffixes = "KMG";
  const std::size_t unit = text.empty() ? std::string::npos : suffixes.find(text.back());
  const std::string digits = unit == std::string::npos ? text : text.substr(0, text.size() - 1);
  const bool plain = !digits.empty() && digits.size() <= 15 &&
                     digits.find_first_not_of("0123456789") == std::string::npos;
  if (!plain) return parse_bytes(text, flag);
  const std::int64_t scale = unit == std::string::npos ? 1 : std::int64_t{1} << (10 * (unit + 1));
  return checked_multiply(std::stoll(digits), scale, fmt::format("{} {}", flag, text));
}

std::vector<std::int64_t> sizes(const PerfOptions& options) {
  const std::int64_t low = parse_size(options.min_bytes, "-b");
  const std::int64_t high = parse_size(options.max_bytes, "-e");
  if (low < 1) {
    throw Error(fmt::format("-b {}: expected a size of at least 1 byte", options.min_bytes));
  }
  if (high < low) {
    throw Error(fmt::format("-e {}: expected a size at least -b ({})", options.max_bytes,
                            options.min_bytes));
  }
  if (options.step_factor < 2) {
    throw Error(fmt::format("-f {}: expected a factor of at least 2", options.step_factor));
  }
  std::vector<std::int64_t> result;
  for (std::int64_t size = low; size <= high; size *= options.step_factor) {
    result.push_back(size);
    if (size > high / options.step_factor) break;
  }
  return result;
}

// The inputs of a run with data: seeded, so every page is written and every run moves the same
// bits; floats below 1 in magnitude, so sums over any device count stay finite.
std::vector<Values> perf_inputs(DType dtype, std::int64_t elements, int devices) {
  constexpr std::uint64_t kSeed = 1;
  std::vector<Values> inputs;
  for (Array& x : random_per_device(dtype, {elements}, devices, kSeed, {.max_exponent = 0})) {
    inputs.push_back(Values{std::move(x)});
  }
  return inputs;
}

// One collective of `spec` on every device; the cost log's record.
sim::CollectiveRecord measure(sim::Machine& machine, const CollectiveSpec& spec, bool cost_only) {
  const int n = machine.device_count();
  if (spec.op == "broadcast") {
    return sim::broadcast_cost(
        machine,
        std::max<std::int64_t>(
            1, spec.bytes / static_cast<std::int64_t>(dtype_size_bytes(spec.dtype))),
        spec.dtype);
  }
  Workload workload;
  workload.kind = WorkloadKind::collectives;
  workload.calls = {spec};
  if (cost_only) return run_workload(machine, workload).collectives.at(0);
  const std::int64_t elements = collective_input_elements(spec, n);
  const std::vector<Values> inputs = perf_inputs(spec.dtype, elements, n);
  const CollectiveCall call = collective_call_for(spec, n);
  machine.run(
      Mesh({n}, {"i"}), inputs,
      [&call](Context& ctx, const Values& xs) { return Values{ctx.collective(call, xs[0])}; },
      false);
  return machine.cost_log().collectives.at(0);
}

std::string row(const sim::CollectiveRecord& r, std::int64_t count, const std::string& type,
                const std::string& op) {
  const bool reduces = op == "all_reduce" || op == "reduce_scatter";
  // nccl-tests' columns: size, count, type, redop, root, time (us), algbw, busbw (GB/s).
  return fmt::format("{:12}  {:12}  {:>8}  {:>6}  {:6}  {:10.2f}  {:8.2f}  {:8.2f}  {}", r.bytes,
                     count, type, reduces ? "sum" : "none", op == "broadcast" ? 0 : -1,
                     static_cast<double>(r.end_ps - r.start_ps) / 1e6, r.algbw_bytes_per_s / 1e9,
                     r.busbw_bytes_per_s / 1e9, r.algorithm);
}

// With data, every device holds its seeded input, its output and about as much again in the
// algorithm's buffers: sizes whose data cannot fit in the host's memory are the flags' error,
// before any row, rather than a long run that ends out of memory.
void check_data_fits(int devices, std::int64_t largest_bytes, const std::string& flag_text) {
  constexpr std::int64_t kBuffersPerDevice = 3;
  const auto what = [&] { return fmt::format("-e {}: the data of {} devices", flag_text, devices); };
  const std::int64_t needed_bytes =
      checked_multiply(checked_multiply(largest_bytes, kBuffersPerDevice, what), devices, what);
  const std::int64_t host_bytes = host_memory_bytes();
  if (needed_bytes > host_bytes) {
    throw Error(fmt::format(
        "-e {}: with data, {} devices hold about {} ({} buffers of {} each), more than the {} "
        "this host gives the process; expected a smaller -e, fewer devices, or --cost-only "
        "(times without data)",
        flag_text, devices, format_bytes(needed_bytes), kBuffersPerDevice,
        format_bytes(largest_bytes), format_bytes(host_bytes)));
  }
}

// A size the host cannot hold after all (the estimate above is an estimate) is the flags'
// error too.
sim::CollectiveRecord measure_or_explain(sim::Machine& machine, const CollectiveSpec& spec,
                                         bool cost_only) {
  try {
    return measure(machine, spec, cost_only);
  } catch (const std::bad_alloc&) {
    throw Error(fmt::format(
        "-e: {} bytes per device with data on {} devices do not fit in this host's memory; "
        "expected a smaller -e, fewer devices, or --cost-only (times without data)",
        spec.bytes, machine.device_count()));
  }
}

}  // namespace

void add_perf_flags(CLI::App& command, PerfOptions& options) {
  command
      .add_option("--op", options.op,
                  "all_reduce, all_gather, reduce_scatter, all_to_all, ppermute or broadcast")
      ->capture_default_str();
  add_machine_flags(command, options.machine);
  command.add_option("-b,--minbytes", options.min_bytes, "Smallest size, e.g. 8, 1KiB, 1M")
      ->capture_default_str();
  command.add_option("-e,--maxbytes", options.max_bytes, "Largest size, e.g. 1G")
      ->capture_default_str();
  command.add_option("-f,--stepfactor", options.step_factor, "Multiply the size by this")
      ->capture_default_str();
  command.add_option("-d,--datatype", options.dtype, "float32, float16, bfloat16, int32, ...")
      ->capture_default_str();
  command.add_flag(
      "--cost-only", options.cost_only,
      "Move no data: times only, for sizes and device counts whose data would not fit");
  add_placement_flag(command, options.placement);
}

int run_perf_command(const PerfOptions& options, std::ostream& out) {
  static const std::set<std::string> ops = {"all_reduce", "all_gather", "reduce_scatter",
                                            "all_to_all", "ppermute",   "broadcast"};
  if (!ops.contains(options.op)) {
    throw Error(
        fmt::format("--op {}: expected all_reduce, all_gather, reduce_scatter, "
                    "all_to_all, ppermute or broadcast",
                    options.op));
  }
  const DType dtype = dtype_from_name(options.dtype);
  const std::vector<std::int64_t> byte_sizes = sizes(options);
  const sim::MachineSpec spec = machine_from_flags(options.machine);
  if (!options.cost_only) check_data_fits(spec.devices, byte_sizes.back(), options.max_bytes);
  const sim::SimOptions sim_options = simulation_options(
      options.machine,
      {.cost_only = options.cost_only, .placement = placement_from_flag(options.placement)});
  sim::Machine machine(spec, sim_options);
  // A placement that does not fit the mesh is an error before any output.
  const sim::MeshPlacement placement(sim_options.placement, Mesh({spec.devices}, {"i"}),
                                     machine.topology());
  out << "# spmdsim perf: " << options.op << " on " << spec.name << " (" << spec.devices
      << " devices, placement " << placement.text() << launch_text(spec) << "), "
      << (options.cost_only ? "cost only" : "with data, seeded inputs") << "\n#\n"
      << "#       size         count      type   redop    root        time     algbw     busbw  "
         "algorithm\n"
      << "#        (B)    (elements)                                    (us)    (GB/s)    (GB/s)\n";
  Progress progress("perf", static_cast<int>(byte_sizes.size()));
  const std::int64_t width = static_cast<std::int64_t>(dtype_size_bytes(dtype));
  AlgorithmNotes notes;
  for (std::size_t i = 0; i < byte_sizes.size(); ++i) {
    const CollectiveSpec call{options.op, std::max(byte_sizes[i], width), dtype};
    const sim::CollectiveRecord record = measure_or_explain(machine, call, options.cost_only);
    out << row(record, record.bytes / width, nccl_type_name(dtype), options.op) << '\n';
    notes.add(record);
    progress.done(static_cast<int>(i + 1));
  }
  out.flush();
  notes.print(std::cerr);
  return 0;
}

}  // namespace spmd
