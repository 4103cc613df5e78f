#include "cli/perf_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>
#include <set>

#include "cli/algorithm_notes.h"
#include "cli/error_limit_flags.h"
#include "cli/host_memory.h"
#include "cli/perf_data_memory.h"
#include "cli/placement_flag.h"
#include "cli/progress.h"
#include "cli/run_memory.h"
#include "reference/error.h"
#include "sim/broadcast_cost.h"
#include "sim/machine.h"
#include "sim/mesh_placement.h"
#include "support/checked_math.h"
#include "support/random_array.h"
#include "support/units.h"
#include "validation/collective_range.h"
#include "validation/error_summary.h"
#include "validation/nccl_tests_log.h"
#include "validation/nccl_type_names.h"
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

// The inputs of a run with data: seeded, so every element is computed and every run moves the
// same bits; floats below 1 in magnitude, so sums over any device count stay finite. Lazy: the
// collective's data path makes each input a tile at a time where it reads it, so the run never
// holds (nor pages in) the devices' inputs, only the results.
std::vector<Values> perf_inputs(DType dtype, std::int64_t elements, int devices) {
  constexpr std::uint64_t kSeed = 1;
  std::vector<Values> inputs;
  for (Array& x : lazy_random_per_device(dtype, {elements}, devices, kSeed, {.max_exponent = 0})) {
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

double time_us(const sim::CollectiveRecord& record) {
  return static_cast<double>(record.end_ps - record.start_ps) / 1e6;
}

// nccl-tests' columns: size, count, type, redop, root, time (us), algbw, busbw (GB/s); then,
// beside a measurement, its time and the prediction's error; then the algorithm, and on a
// machine with a fabric the range the time carries (validation/collective_range.h).
std::string row(const sim::CollectiveRecord& r, std::int64_t count, const std::string& type,
                const std::string& op, std::optional<double> measured_us,
                std::optional<ValueRange> range) {
  const bool reduces = op == "all_reduce" || op == "reduce_scatter";
  std::string text =
      fmt::format("{:12}  {:12}  {:>8}  {:>6}  {:6}  {:10.2f}  {:8.2f}  {:8.2f}", r.bytes, count,
                  type, reduces ? "sum" : "none", op == "broadcast" ? 0 : -1, time_us(r),
                  r.algbw_bytes_per_s / 1e9, r.busbw_bytes_per_s / 1e9);
  if (measured_us) {
    text += fmt::format("  {:10.2f}  {:+7.1f}%", *measured_us,
                        100 * relative_error(time_us(r), *measured_us));
  }
  text += "  " + r.algorithm;
  if (range) {
    text += std::string(std::max<std::size_t>(1, 14 - r.algorithm.size()), ' ') +
            fmt::format("{:.2f}-{:.2f}", range->low, range->high);
  }
  return text;
}

// With data, a run holds its op's buffers (cli/perf_data_memory.h): sizes whose data cannot fit in
// the host's memory are the flags' error, before any row, rather than a long run that ends out
// of memory.
void check_data_fits(const std::string& op, int devices, std::int64_t largest_bytes,
                     const std::string& flag_text) {
  const std::int64_t needed_bytes = perf_data_bytes(op, devices, largest_bytes);
  const std::int64_t host_bytes = host_memory_bytes();
  if (needed_bytes > host_bytes) {
    const PerfDataBuffers buffers = perf_data_buffers(op);
    throw Error(fmt::format(
        "-e {}: with data, {} on {} devices holds about {} (buffers of {}: {}{}{}), more than "
        "the {} this host gives the process; expected a smaller -e, fewer devices, or "
        "--cost-only (times without data)",
        flag_text, op, devices, format_bytes(needed_bytes), format_bytes(largest_bytes),
        buffers.in_all > 0 ? fmt::format("{} in all", buffers.in_all) : "",
        buffers.in_all > 0 && buffers.per_device > 0 ? " and " : "",
        buffers.per_device > 0 ? fmt::format("{} a device", buffers.per_device) : "",
        format_bytes(host_bytes)));
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

// ---- --compare: an nccl-tests output beside the run

// The op the output measured: the one test it names, or --op where it names none.
std::string compared_op(const PerfOptions& options, const NcclTestsLog& log) {
  const bool op_given = options.op_option != nullptr && options.op_option->count() > 0;
  return op_of_output(log, "--compare " + options.compare, op_given ? options.op : "");
}

// The machine with the output's ranks (unless -n says otherwise, which must agree) and, unless
// the flags say, its launch: one process per nGpus GPUs, a graph launch (-G).
sim::MachineSpec compared_machine(const PerfOptions& options, const NcclTestsLog& log) {
  const MachineFlags& flags = options.machine;
  const bool devices_given = flags.devices_option != nullptr && flags.devices_option->count() > 0;
  if (devices_given && log.ranks && *log.ranks != flags.devices) {
    throw Error(fmt::format("--devices {}: --compare {} ran on {} ranks; expected -n {} or no -n",
                            flags.devices, options.compare, *log.ranks, *log.ranks));
  }
  sim::MachineSpec spec = log.ranks && !devices_given ? machine_with_devices(flags, *log.ranks)
                                                      : machine_from_flags(flags);
  if (!spec.fabric) return spec;
  const std::optional<int> gpus_per_process =
      flags.gpus_per_process ? std::nullopt : log.gpus_per_process;
  const bool graph_launch = !flags.graph_launch && log.graph_launch.value_or(false);
  if (!gpus_per_process && !graph_launch) return spec;
  try {
    return with_launch_flags(std::move(spec), gpus_per_process, graph_launch);
  } catch (const Error& e) {
    throw Error(fmt::format("--compare {} (nGpus {}): {}", options.compare,
                            gpus_per_process.value_or(1), e.what()));
  }
}

// Where the output ran on other hosts than the machine's nodes, a note says so: the prediction
// is for the machine as the flags build it.
void note_host_difference(const sim::MachineSpec& spec, const NcclTestsLog& log,
                          const std::string& file) {
  if (!spec.fabric || !log.hosts) return;
  const int nodes = cost_model::nodes_of(*spec.fabric, spec.devices);
  if (nodes == *log.hosts) return;
  std::cerr << fmt::format(
      "note: --compare {} ran on {} host{}; {} puts its {} devices on {} node{}\n", file,
      *log.hosts, *log.hosts == 1 ? "" : "s", spec.name, spec.devices, nodes,
      nodes == 1 ? "" : "s");
}

struct PerfRun {
  std::string op;
  DType dtype = DType::float32;
  sim::MachineSpec spec;
  std::vector<std::int64_t> sizes;
  std::vector<double> measured_us;  // beside each size, with --compare
  bool cost_only = false;
};

PerfRun perf_run(const PerfOptions& options) {
  const DType dtype = dtype_from_name(options.dtype);
  if (options.compare.empty()) {
    return {.op = options.op,
            .dtype = dtype,
            .spec = machine_from_flags(options.machine),
            .sizes = sizes(options),
            .cost_only = options.cost_only};
  }
  const NcclTestsLog log = read_nccl_tests_log(options.compare);
  // The output's element type where perf has it (not uint32 or the fp8 formats), else -d's: the
  // time is per byte, the type sets the count column.
  PerfRun run{.op = compared_op(options, log),
              .dtype = dtype_of_nccl_type(log.results.front().type).value_or(dtype),
              .spec = compared_machine(options, log),
              .cost_only = true};
  for (const NcclTestsResult& result : log.results) {
    run.sizes.push_back(result.size_bytes);
    run.measured_us.push_back(result.time_us);
  }
  note_host_difference(run.spec, log, options.compare);
  if (!log.ranks) {
    std::cerr << fmt::format(
        "note: --compare {} does not say on how many ranks it ran (no \"#  Rank\" lines); timed "
        "on {} devices\n",
        options.compare, run.spec.devices);
  }
  return run;
}

// The machine's devices, each with its data, from the estimate before anything is allocated
// (cli/run_memory.h): a run that cannot fit is the flags' error, not minutes of growth.
void check_machine_fits_host(const PerfOptions& options, const PerfRun& run) {
  // Each device's share of the op's data, rounded up (check_data_fits counts it in all).
  std::int64_t data_bytes = 0;
  if (!run.cost_only) {
    const std::int64_t all = perf_data_bytes(run.op, run.spec.devices, run.sizes.back());
    const std::int64_t devices = std::max(1, run.spec.devices);
    data_bytes = all / devices + (all % devices != 0 ? 1 : 0);
  }
  const bool devices_given =
      options.machine.devices_option != nullptr && options.machine.devices_option->count() > 0;
  const std::string what = devices_given || options.machine.machine.empty()
                               ? fmt::format("--devices {}", run.spec.devices)
                               : fmt::format("--machine {}", options.machine.machine);
  check_run_fits_host(simulated_run_memory(run.spec, data_bytes), what,
                      run.cost_only ? "" : "a smaller -e, or --cost-only (times without data)");
}

void print_error_summary(const ErrorSummary& summary, const std::string& file, std::ostream& out) {
  if (summary.rows == 0) return;
  out << fmt::format(
      "# {} size{} beside {}: median |error| {:.1f}%, p90 |error| {:.1f}%, within 10%: "
      "{:.1f}%\n",
      summary.rows, summary.rows == 1 ? "" : "s", file, 100 * *summary.median_abs_error,
      100 * *summary.p90_abs_error, 100 * *summary.share_within_10_percent);
}

}  // namespace

cost_model::TimedOp timed_op_of_perf_op(const std::string& op) {
  static const std::set<std::string> ops = {"all_reduce", "all_gather", "reduce_scatter",
                                            "all_to_all", "ppermute",   "broadcast"};
  if (!ops.contains(op)) {
    throw Error(
        fmt::format("--op {}: expected all_reduce, all_gather, reduce_scatter, "
                    "all_to_all, ppermute or broadcast",
                    op));
  }
  return op == "ppermute" ? cost_model::TimedOp::permute : cost_model::timed_op_from_name(op);
}

void add_perf_flags(CLI::App& command, PerfOptions& options) {
  options.op_option =
      command
          .add_option("--op", options.op,
                      "all_reduce, all_gather, reduce_scatter, all_to_all, ppermute or broadcast")
          ->capture_default_str();
  add_machine_flags(command, options.machine);
  CLI::Option* min_bytes =
      command.add_option("-b,--minbytes", options.min_bytes, "Smallest size, e.g. 8, 1KiB, 1M")
          ->capture_default_str();
  CLI::Option* max_bytes =
      command.add_option("-e,--maxbytes", options.max_bytes, "Largest size, e.g. 1G")
          ->capture_default_str();
  CLI::Option* step_factor =
      command.add_option("-f,--stepfactor", options.step_factor, "Multiply the size by this")
          ->capture_default_str();
  command.add_option("-d,--datatype", options.dtype, "float32, float16, bfloat16, int32, ...")
      ->capture_default_str();
  command.add_flag(
      "--cost-only", options.cost_only,
      "Move no data: times only, for sizes and device counts whose data would not fit");
  add_placement_flag(command, options.placement);
  command
      .add_option(
          "--compare", options.compare,
          "An nccl-tests or rccl-tests output: time the sizes it measured, on its ranks, op and "
          "launch (-g, -G), without data, and print its time and the error beside each "
          "prediction, then their median and p90 |error|")
      ->excludes(min_bytes)
      ->excludes(max_bytes)
      ->excludes(step_factor);
  add_error_limit_flags(command, options.limits, "--compare's sizes");
}

int run_perf_command(const PerfOptions& options, std::ostream& out) {
  static_cast<void>(timed_op_of_perf_op(options.op));  // an error for any other name
  if ((options.limits.max_median || options.limits.max_p90) && options.compare.empty()) {
    throw Error(
        "--max-median, --max-p90: given without --compare; expected --compare OUTPUT, "
        "whose sizes they limit");
  }
  const PerfRun run = perf_run(options);
  const bool beside = !run.measured_us.empty();
  if (!run.cost_only) {
    check_data_fits(run.op, run.spec.devices, run.sizes.back(), options.max_bytes);
  }
  check_machine_fits_host(options, run);
  const sim::SimOptions sim_options = simulation_options(
      options.machine,
      {.cost_only = run.cost_only, .placement = placement_from_flag(options.placement)});
  sim::Machine machine(run.spec, sim_options);
  // A placement that does not fit the mesh is an error before any output.
  const sim::MeshPlacement placement(sim_options.placement, Mesh({run.spec.devices}, {"i"}),
                                     machine.topology());
  out << "# spmdsim perf: " << run.op << " on " << run.spec.name << " (" << run.spec.devices
      << " devices, placement " << placement.text() << launch_text(run.spec) << "), "
      << (run.cost_only ? "cost only" : "with data, seeded inputs")
      << (beside ? ", beside " + options.compare : "") << "\n#\n"
      << "#       size         count      type   redop    root        time     algbw     busbw  "
      << (beside ? "  measured     error  " : "") << "algorithm"
      << (run.spec.fabric ? "     range (us)" : "") << "\n"
      << "#        (B)    (elements)                                    (us)    (GB/s)    (GB/s)"
      << (beside ? "      (us)" : "") << "\n";
  Progress progress("perf", static_cast<int>(run.sizes.size()));
  const std::int64_t width = static_cast<std::int64_t>(dtype_size_bytes(run.dtype));
  AlgorithmNotes notes;
  std::vector<double> errors;
  for (std::size_t i = 0; i < run.sizes.size(); ++i) {
    const CollectiveSpec call{run.op, std::max(run.sizes[i], width), run.dtype};
    const sim::CollectiveRecord record = measure_or_explain(machine, call, run.cost_only);
    const std::optional<double> measured =
        beside ? std::optional(run.measured_us[i]) : std::nullopt;
    std::optional<ValueRange> range;
    if (run.spec.fabric) {
      const bool across_nodes = run.spec.devices > run.spec.fabric->devices_per_node;
      range = collective_time_range(*run.spec.fabric, across_nodes, time_us(record));
    }
    out << row(record, record.bytes / width, nccl_type_name(run.dtype), run.op, measured, range)
        << '\n';
    if (measured) errors.push_back(relative_error(time_us(record), *measured));
    notes.add(record);
    progress.done(static_cast<int>(i + 1));
  }
  const ErrorSummary summary = summarize_errors(errors);
  print_error_summary(summary, options.compare, out);
  out.flush();
  notes.print(std::cerr);
  return exit_code_for_limits(options.limits, summary, "size", "perf", std::cerr);
}

}  // namespace spmd
