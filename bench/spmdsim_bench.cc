// Speed of the simulator, measured (never asserted): Google Benchmark cases, and at the end, on
// stderr, each figure against its target (the real-data all-reduce as a ratio to its baseline
// from the same run). The standard flags work: --benchmark_format=json, --benchmark_out=FILE.
//   BM_SimAllReduceRealData/8/64MiB   ring topology, ring algorithm, float32, data moved
//   BM_SimAllReduceLazyInputs/8/64MiB the same as `spmdsim perf` with data runs it: the seeded
//                                     inputs made lazily each time and read a tile at a time by
//                                     the data path; against BM_SeededInputs + the real-data
//                                     all-reduce (inputs made whole first), the ratio printed
//   BM_BareSum/8/64MiB                the baseline: one loop summing the same 8 arrays once
//   BM_SeededInputs/8/64MiB           making those 8 seeded inputs (support/random_array.h), as
//                                     `spmdsim perf` with data does, fresh memory each time
//   BM_FreshArrays/8/64MiB            the same 8 arrays allocated and every page written: the
//                                     first touch that any way of filling them pays; the seeded
//                                     inputs' time above it, against the real-data all-reduce's,
//                                     is the ratio printed (target <= 1)
//   BM_SimAllReduceCostOnly/1024      no data, fifo link sharing, every message carried (no fast
//                                     path); counter: simulated link transfers per second
//   BM_SimAllReduceCostOnly/switch/4096/1GiB   the same, 1 GiB on 4,096 devices of a switch
//   BM_SimAllReduceCostOnly/1024/fair the same under fair link sharing (docs/link-sharing.md)
//   BM_SimContendedCostOnly/...       contended: halving-doubling all-reduce and a direct
//                                     all-to-all on a ring, under fifo and fair
//   BM_FiberDevices/65536             65,536 fiber devices on a switch, one small all-reduce;
//                                     peak RSS
//   BM_RepeatedRuns/131072            one machine of 131,072 devices on a switch, five cost-only
//                                     all-reduces one run each, as perf times its sizes: the first
//                                     run's time and the next runs' (their stacks are reused)
//   BM_TransformerStep/70b/1024/...  one step of docs/workloads/llama3-70b-tp8-pp4.json on
//                                     hgx-h100 -n 1024, as `spmdsim scale` runs it: symmetric
//                                     (one device per stage, workloads/symmetric_step.h) and
//                                     full; the 405B file on 16,384 and 131,072, symmetric only
//   BM_SoakSmallCollectives/8/1000000 one run of a million small psums (with data) and compute
//                                     spans on 8 devices; resident memory after 250,000 and after
//                                     all of them: flat when their ratio is about 1

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "reference/array.h"
#include "sim/machine.h"
#include "sim/machine_presets.h"
#include "support/random_array.h"
#include "training/accelerator.h"
#include "training/layout_search.h"
#include "workloads/symmetric_step.h"

namespace spmd {
namespace {

using collectives::Algorithm;

constexpr std::int64_t kMiB = 1024 * 1024;

// Seeded float32 data below 1 in magnitude, every page written (an untouched zero page would
// make the real-data run look cheaper than it is).
std::vector<Array> seeded_arrays(int count, std::int64_t elements) {
  return random_per_device(DType::float32, {elements}, count, /*seed=*/1, {.max_exponent = 0});
}

sim::MachineSpec ring_machine(int devices) {
  sim::MachineSpec spec;
  spec.name = "bench ring";
  spec.devices = devices;
  spec.topology = topology::RingSpec{.devices = devices};
  return spec;
}

void BM_BareSum(benchmark::State& state, int count, std::int64_t mebibytes) {
  const std::int64_t elements = mebibytes * kMiB / 4;
  const std::vector<Array> arrays = seeded_arrays(count, elements);
  std::vector<const float*> in;
  for (const Array& a : arrays) in.push_back(a.values<float>().data());
  Array out(DType::float32, {elements});
  float* o = out.mutable_values<float>().data();
  for (auto _ : state) {
    for (std::int64_t i = 0; i < elements; ++i) {
      float sum = in[0][i];
      for (int a = 1; a < count; ++a) sum += in[static_cast<std::size_t>(a)][i];
      o[i] = sum;
    }
    benchmark::DoNotOptimize(o);
    benchmark::ClobberMemory();
  }
}

// The inputs of a real-data run, made afresh each iteration (allocation and first touch of the
// pages included, as in `spmdsim perf`).
void BM_SeededInputs(benchmark::State& state, int devices, std::int64_t mebibytes) {
  const std::int64_t elements = mebibytes * kMiB / 4;
  for (auto _ : state) {
    std::vector<Array> inputs = seeded_arrays(devices, elements);
    benchmark::DoNotOptimize(inputs);
  }
  state.SetBytesProcessed(state.iterations() * devices * mebibytes * kMiB);
}

// The floor under BM_SeededInputs: the same arrays allocated and every page written, no values
// made. (Array's constructor alone no longer touches them: fresh zero pages come from calloc.)
void BM_FreshArrays(benchmark::State& state, int devices, std::int64_t mebibytes) {
  const std::int64_t elements = mebibytes * kMiB / 4;
  for (auto _ : state) {
    std::vector<Array> arrays;
    for (int d = 0; d < devices; ++d) {
      Array& a = arrays.emplace_back(DType::float32, Shape{elements});
      const std::span<std::byte> bytes = a.mutable_bytes();
      std::memset(bytes.data(), 0, bytes.size());
    }
    benchmark::DoNotOptimize(arrays);
  }
}

void BM_SimAllReduceRealData(benchmark::State& state, int devices, std::int64_t mebibytes) {
  const std::int64_t elements = mebibytes * kMiB / 4;
  sim::Machine machine(ring_machine(devices), {.algorithm = Algorithm::ring});
  const Mesh mesh({devices}, {"i"});
  std::vector<Values> inputs;
  for (Array& a : seeded_arrays(devices, elements)) inputs.push_back({std::move(a)});
  const DeviceFunction psum = [](Context& ctx, const Values& xs) {
    return Values{ctx.psum(xs[0], AxisNames("i"))};
  };
  for (auto _ : state) {
    std::vector<Values> out = machine.run(mesh, inputs, psum, false);
    benchmark::DoNotOptimize(out);
  }
  state.counters["simulated_us"] =
      static_cast<double>(machine.cost_log().collectives.at(0).end_ps) / 1e6;
}

// What `spmdsim perf --op all_reduce -b 64M -e 64M` with data does per size: lazy seeded inputs
// (support/random_array.h), made afresh each iteration, which the data path makes a tile at a
// time where it reads them, never whole.
void BM_SimAllReduceLazyInputs(benchmark::State& state, int devices, std::int64_t mebibytes) {
  const std::int64_t elements = mebibytes * kMiB / 4;
  sim::Machine machine(ring_machine(devices), {.algorithm = Algorithm::ring});
  const Mesh mesh({devices}, {"i"});
  const DeviceFunction psum = [](Context& ctx, const Values& xs) {
    return Values{ctx.psum(xs[0], AxisNames("i"))};
  };
  for (auto _ : state) {
    std::vector<Values> inputs;
    for (Array& a : lazy_random_per_device(DType::float32, {elements}, devices, /*seed=*/1,
                                           {.max_exponent = 0})) {
      inputs.push_back({std::move(a)});
    }
    std::vector<Values> out = machine.run(mesh, inputs, psum, false);
    benchmark::DoNotOptimize(out);
  }
}

// One cost-only collective over every device of a bidirectional ring (or a switch), as often as
// the benchmark wants, every message carried (the fast path off); counts the link transfers
// simulated per second.
void BM_SimCostOnly(benchmark::State& state, int devices, bool on_switch, CollectiveOp op,
                    Algorithm algorithm, std::int64_t elements, sim::LinkSharing sharing) {
  sim::MachineSpec spec = ring_machine(devices);
  if (on_switch) spec.topology = topology::SwitchSpec{.devices = devices};
  spec.link_sharing = sharing;
  sim::Machine machine(spec, {.cost_only = true, .algorithm = algorithm, .fast_path = false});
  const Mesh mesh({devices}, {"i"});
  const std::vector<Values> inputs(static_cast<std::size_t>(devices));
  CollectiveCall call;
  call.op = op;
  call.axes = AxisNames("i");
  call.tiled = true;
  const DeviceFunction program = [&](Context& ctx, const Values&) {
    ctx.collective_cost(call, DType::float32, {elements});
    return Values{};
  };
  double transfers = 0;
  for (auto _ : state) {
    machine.run(mesh, inputs, program, false);
    transfers += static_cast<double>(machine.cost_log().link_transfers);
  }
  state.counters["link_transfers_per_s"] =
      benchmark::Counter(transfers, benchmark::Counter::kIsRate);
}

// On a switch, so that the figure measures the fibers, not 32,768-hop routes of a ring.
void BM_FiberDevices(benchmark::State& state, int devices) {
  sim::MachineSpec spec = ring_machine(devices);
  spec.topology = topology::SwitchSpec{.devices = devices};
  sim::Machine machine(spec);
  const Mesh mesh({devices}, {"i"});
  std::vector<Values> inputs;
  for (int d = 0; d < devices; ++d) inputs.push_back({Array::scalar<float>(static_cast<float>(d))});
  const DeviceFunction psum = [](Context& ctx, const Values& xs) {
    return Values{ctx.psum(xs[0], AxisNames("i"))};
  };
  for (auto _ : state) {
    std::vector<Values> out = machine.run(mesh, inputs, psum, false);
    benchmark::DoNotOptimize(out);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["peak_rss_MiB"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  state.counters["algorithm_is_" + machine.cost_log().collectives.at(0).algorithm] = 1;
}

// Seconds `work` takes on the host's steady clock (the benchmark's, not the simulator's).
template <typename Work>
double seconds_of(Work&& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A fresh machine's first cost-only run against its next ones, as `spmdsim perf` times one size
// after another on one machine: the first makes every device fiber's stack, the next ones take
// them from the machine's pool (sim/fiber_stack.h).
void BM_RepeatedRuns(benchmark::State& state, int devices) {
  sim::MachineSpec spec = ring_machine(devices);
  spec.topology = topology::SwitchSpec{.devices = devices};
  const Mesh mesh({devices}, {"i"});
  const std::vector<Values> inputs(static_cast<std::size_t>(devices));
  CollectiveCall call;
  call.op = CollectiveOp::psum;
  call.axes = AxisNames("i");
  const DeviceFunction all_reduce = [&](Context& ctx, const Values&) {
    ctx.collective_cost(call, DType::float32, {kMiB});
    return Values{};
  };
  constexpr int kNextRuns = 4;
  double first_s = 0;
  double next_s = 0;
  for (auto _ : state) {
    sim::Machine machine(spec, {.cost_only = true});
    first_s += seconds_of([&] { machine.run(mesh, inputs, all_reduce, false); });
    for (int run = 0; run < kNextRuns; ++run) {
      next_s += seconds_of([&] { machine.run(mesh, inputs, all_reduce, false); });
    }
  }
  const auto machines = static_cast<double>(state.iterations());
  state.counters["first_run_ms"] = first_s / machines * 1e3;
  state.counters["next_run_ms"] = next_s / (machines * kNextRuns) * 1e3;
}

// Resident memory of this process now (not the peak), from /proc/self/statm.
double resident_mib() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t total_pages = 0;
  std::int64_t resident_pages = 0;
  statm >> total_pages >> resident_pages;
  return static_cast<double>(resident_pages) * static_cast<double>(sysconf(_SC_PAGESIZE)) /
         static_cast<double>(kMiB);
}

// A long training loop in one run: each device computes, then sums 4 floats with the others,
// `collectives` times. Everything the run keeps per collective must be bounded (the cost log
// stops at SimOptions::log_record_limit records and keeps counting), so the resident memory
// after all of them equals that after the first quarter of a million (device 0 reads it).
void BM_SoakSmallCollectives(benchmark::State& state, int devices, int collectives) {
  sim::MachineSpec spec = ring_machine(devices);
  spec.topology = topology::SwitchSpec{.devices = devices};
  sim::Machine machine(spec);
  const Mesh mesh({devices}, {"i"});
  const std::vector<Values> inputs(static_cast<std::size_t>(devices));
  constexpr int kEarlySample = 250'000;
  double early_mib = 0;
  double end_mib = 0;
  const DeviceFunction program = [&](Context& ctx, const Values&) {
    Array x(DType::float32, {4});
    for (int c = 0; c < collectives; ++c) {
      ctx.charge_compute(/*flops=*/1e6, /*bytes_moved=*/4096);
      x = ctx.psum(x, AxisNames("i"));
      if (ctx.device() == 0 && c + 1 == kEarlySample) early_mib = resident_mib();
    }
    if (ctx.device() == 0) end_mib = resident_mib();
    return Values{x};
  };
  for (auto _ : state) {
    std::vector<Values> out = machine.run(mesh, inputs, program, false);
    benchmark::DoNotOptimize(out);
  }
  state.counters["collectives"] = static_cast<double>(machine.cost_log().collective_count);
  state.counters["collectives_per_s"] = benchmark::Counter(
      static_cast<double>(machine.cost_log().collective_count), benchmark::Counter::kIsRate);
  state.counters["rss_after_250k_MiB"] = early_mib;
  state.counters["rss_at_end_MiB"] = end_mib;
}

// One transformer step from a file under docs/workloads, by representatives or in full.
void BM_TransformerStep(benchmark::State& state, const char* file, int devices, bool symmetric) {
  const Workload workload =
      load_workload_file(std::string(SPMD_SOURCE_DIR) + "/docs/workloads/" + file);
  for (auto _ : state) {
    sim::Machine machine(machine_preset_with_devices("hgx-h100", devices), {.cost_only = true});
    const WorkloadRun run = run_workload_symmetric(machine, workload, symmetric);
    benchmark::DoNotOptimize(run.log.end_ps);
  }
}

// One plan search on one thread: the whole list (`stride` 1), or the first of `stride` processes'
// strided shares, as each rank of `mpirun -np stride spmdsim plan` evaluates it.
void BM_PlanSearch(benchmark::State& state, const char* model_file, const char* preset,
                   int devices, std::size_t stride) {
  const training::PlanModel model =
      training::load_plan_model(std::string(SPMD_SOURCE_DIR) + "/docs/workloads/training/" +
                                model_file);
  const training::PlanSetting setting =
      training::plan_setting(model, training::accelerator_of_preset(preset)->description, devices);
  for (auto _ : state) {
    const training::CandidateList list = training::enumerate_candidates(setting);
    const std::vector<training::PlanResult> share =
        training::evaluate_candidates_strided(setting, list.candidates, 0, stride, 1);
    benchmark::DoNotOptimize(share.data());
  }
}

// Names carry the sizes as the figures are quoted ("8/64MiB"); the sizes are bound arguments so
// that Google Benchmark does not append them to the name a second time.
void register_benchmarks() {
  for (const std::size_t stride : {1, 2}) {
    benchmark::RegisterBenchmark(fmt::format("BM_PlanSearch/deepseek-v3/gb200-nvl72/2048/share_of_{}", stride).c_str(),
                                 BM_PlanSearch, "deepseek-v3.json", "gb200-nvl72", 2048, stride)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(fmt::format("BM_PlanSearch/llama3-70b/hgx-h100/1024/share_of_{}", stride).c_str(),
                                 BM_PlanSearch, "llama3-70b.json", "hgx-h100", 1024, stride)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("BM_BareSum/8/64MiB", BM_BareSum, 8, 64)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_SimAllReduceRealData/8/64MiB", BM_SimAllReduceRealData, 8, 64)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_SimAllReduceLazyInputs/8/64MiB", BM_SimAllReduceLazyInputs, 8,
                               64)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_SeededInputs/8/64MiB", BM_SeededInputs, 8, 64)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_FreshArrays/8/64MiB", BM_FreshArrays, 8, 64)
      ->Unit(benchmark::kMillisecond);
  using sim::LinkSharing;
  benchmark::RegisterBenchmark("BM_SimAllReduceCostOnly/1024", BM_SimCostOnly, 1024, false,
                               CollectiveOp::psum, Algorithm::ring, 64 * kMiB / 4,
                               LinkSharing::fifo)
      ->Unit(benchmark::kMillisecond);
  // The message-level goal: 1 GiB over a switch of 4,096 devices, 33.5 M link transfers a run.
  benchmark::RegisterBenchmark("BM_SimAllReduceCostOnly/switch/4096/1GiB", BM_SimCostOnly, 4096,
                               true, CollectiveOp::psum, Algorithm::ring, 1024 * kMiB / 4,
                               LinkSharing::fifo)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_SimAllReduceCostOnly/1024/fair", BM_SimCostOnly, 1024,
                               false, CollectiveOp::psum, Algorithm::ring, 64 * kMiB / 4,
                               LinkSharing::fair)
      ->Unit(benchmark::kMillisecond);
  for (const LinkSharing sharing : {LinkSharing::fifo, LinkSharing::fair}) {
    const std::string_view name = sim::link_sharing_name(sharing);
    benchmark::RegisterBenchmark(
        fmt::format("BM_SimContendedCostOnly/halving_doubling/1024/{}", name).c_str(),
        BM_SimCostOnly, 1024, false, CollectiveOp::psum, Algorithm::halving_doubling, 64 * kMiB / 4,
        sharing)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(
        fmt::format("BM_SimContendedCostOnly/all_to_all/256/{}", name).c_str(), BM_SimCostOnly, 256,
        false, CollectiveOp::all_to_all, Algorithm::direct, 64 * kMiB / 4, sharing)
        ->Unit(benchmark::kMillisecond);
  }
  for (const int devices : {4096, 65536}) {
    benchmark::RegisterBenchmark(fmt::format("BM_FiberDevices/{}", devices).c_str(),
                                 BM_FiberDevices, devices)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("BM_RepeatedRuns/131072", BM_RepeatedRuns, 131072)
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_TransformerStep/70b/1024/symmetric", BM_TransformerStep,
                               "llama3-70b-tp8-pp4.json", 1024, true)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_TransformerStep/70b/1024/full", BM_TransformerStep,
                               "llama3-70b-tp8-pp4.json", 1024, false)
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_TransformerStep/405b/16384/symmetric", BM_TransformerStep,
                               "llama3-405b-tp8-pp16.json", 16384, true)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_TransformerStep/405b/131072/symmetric", BM_TransformerStep,
                               "llama3-405b-tp8-pp16-gb16k.json", 131072, true)
      ->Iterations(3)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_SoakSmallCollectives/8/1000000", BM_SoakSmallCollectives, 8,
                               1'000'000)
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
}

// The display reporter --benchmark_format asks for (console, json or csv). Google Benchmark
// chooses it itself only when no reporter is passed, and this one wraps it.
std::unique_ptr<benchmark::BenchmarkReporter> display_reporter(std::string_view format) {
  if (format == "json") return std::make_unique<benchmark::JSONReporter>();
  if (format == "csv") {
    // Deprecated upstream but still what --benchmark_format=csv gives without a custom reporter.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return std::make_unique<benchmark::CSVReporter>();
#pragma GCC diagnostic pop
  }
  const bool color = isatty(fileno(stdout)) != 0;
  return std::make_unique<benchmark::ConsoleReporter>(
      color ? benchmark::ConsoleReporter::OO_ColorTabular : benchmark::ConsoleReporter::OO_Tabular);
}

// The last --benchmark_format=... on the command line ("console" without one), read before
// benchmark::Initialize takes its flags out of argv; Initialize rejects unknown formats.
std::string format_flag(int argc, char** argv) {
  constexpr std::string_view kFlag = "--benchmark_format=";
  std::string format = "console";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with(kFlag)) format = arg.substr(kFlag.size());
  }
  return format;
}

// Passes everything to the display reporter and keeps each run's time and counters, so that the
// figures against their targets can be printed after the results.
class RatioReporter : public benchmark::BenchmarkReporter {
 public:
  explicit RatioReporter(std::unique_ptr<benchmark::BenchmarkReporter> display)
      : display_(std::move(display)) {}

  bool ReportContext(const Context& context) override { return display_->ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
      times_[run.run_name.function_name] = run.GetAdjustedRealTime();
      cpu_times_[run.run_name.function_name] = run.GetAdjustedCPUTime();
      for (const auto& [name, counter] : run.counters) {
        counters_[run.run_name.function_name + " " + name] = counter.value;
      }
    }
    display_->ReportRuns(runs);
  }
  void Finalize() override { display_->Finalize(); }

  // On stderr, so that JSON or CSV on stdout stays valid.
  void print_ratios(std::ostream& out) const {
    const auto sim = times_.find("BM_SimAllReduceRealData/8/64MiB");
    const auto bare = times_.find("BM_BareSum/8/64MiB");
    if (sim != times_.end() && bare != times_.end()) {
      out << fmt::format(
          "ratio BM_SimAllReduceRealData/8/64MiB : BM_BareSum/8/64MiB = {:g} "
          "(target <= 1.2)\n",
          sim->second / bare->second);
    }
    // CPU time: all three run on one thread, and a shared machine stretches their wall time.
    const auto inputs = cpu_times_.find("BM_SeededInputs/8/64MiB");
    const auto fresh = cpu_times_.find("BM_FreshArrays/8/64MiB");
    const auto sim_cpu = cpu_times_.find("BM_SimAllReduceRealData/8/64MiB");
    if (sim_cpu != cpu_times_.end() && inputs != cpu_times_.end() && fresh != cpu_times_.end()) {
      out << fmt::format(
          "ratio (BM_SeededInputs/8/64MiB - BM_FreshArrays/8/64MiB) : "
          "BM_SimAllReduceRealData/8/64MiB in CPU time = {:.2f} (target <= 1: making the inputs' "
          "values costs no more than the simulated all-reduce; {:.0f} ms - {:.0f} ms : {:.0f} ms; "
          "with the first touch of their pages, the inputs' {:.0f} ms : {:.0f} ms = {:.2f})\n",
          (inputs->second - fresh->second) / sim_cpu->second, inputs->second, fresh->second,
          sim_cpu->second, inputs->second, sim_cpu->second, inputs->second / sim_cpu->second);
    }
    const auto lazy = cpu_times_.find("BM_SimAllReduceLazyInputs/8/64MiB");
    if (lazy != cpu_times_.end() && inputs != cpu_times_.end() && sim_cpu != cpu_times_.end()) {
      out << fmt::format(
          "ratio BM_SimAllReduceLazyInputs/8/64MiB : (BM_SeededInputs/8/64MiB + "
          "BM_SimAllReduceRealData/8/64MiB) in CPU time = {:.2f} (below 1: inputs made where the "
          "all-reduce reads them beat inputs made whole first; {:.0f} ms : {:.0f} ms + {:.0f} ms)\n",
          lazy->second / (inputs->second + sim_cpu->second), lazy->second, inputs->second,
          sim_cpu->second);
    }
    if (const auto soak = counters("BM_SoakSmallCollectives/8/1000000 rss_at_end_MiB",
                                   "BM_SoakSmallCollectives/8/1000000 rss_after_250k_MiB")) {
      out << fmt::format(
          "ratio resident memory after 1,000,000 : after 250,000 collectives = {:.3f} "
          "(target about 1: flat)\n",
          soak->first / soak->second);
    }
    if (const auto runs =
            counters("BM_RepeatedRuns/131072 next_run_ms", "BM_RepeatedRuns/131072 first_run_ms")) {
      out << fmt::format(
          "ratio next run : first run of one machine of 131,072 devices = {:.2f} ({:.0f} ms : "
          "{:.0f} ms; below 1: the next runs reuse the stacks the first made)\n",
          runs->first / runs->second, runs->first, runs->second);
    }
    constexpr std::string_view kRate = " link_transfers_per_s";
    const std::map<std::string, int, std::less<>> targets = {
        {"BM_SimAllReduceCostOnly/1024", 10}, {"BM_SimAllReduceCostOnly/switch/4096/1GiB", 50}};
    for (const auto& [name, value] : counters_) {
      if (!name.ends_with(kRate)) continue;
      const std::string_view bench = std::string_view(name).substr(0, name.size() - kRate.size());
      const auto target = targets.find(bench);
      out << fmt::format("{}: {:.1f} M link transfers/s{}\n", bench, value / 1e6,
                         target == targets.end()
                             ? ""
                             : fmt::format(" (target >= {} M/s)", target->second));
    }
  }

 private:
  // Two counters' values ("benchmark counter" names), when the run measured both.
  std::optional<std::pair<double, double>> counters(const std::string& first,
                                                    const std::string& second) const {
    const auto a = counters_.find(first);
    const auto b = counters_.find(second);
    if (a == counters_.end() || b == counters_.end()) return std::nullopt;
    return std::pair{a->second, b->second};
  }

  std::unique_ptr<benchmark::BenchmarkReporter> display_;
  std::map<std::string, double> times_;
  std::map<std::string, double> cpu_times_;  // one thread each: steadier on a shared machine
  std::map<std::string, double> counters_;  // "benchmark counter" -> value
};

}  // namespace
}  // namespace spmd

int main(int argc, char** argv) {
  const std::string format = spmd::format_flag(argc, argv);
  benchmark::Initialize(&argc, argv);
  spmd::register_benchmarks();
  // --benchmark_out=FILE writes a second report in --benchmark_out_format, made by the library.
  spmd::RatioReporter reporter(spmd::display_reporter(format));
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_ratios(std::cerr);
  benchmark::Shutdown();
  return 0;
}
