// spmdsim: the command-line entry point. Exit codes: 0 success, 1 a check failed (a conformance
// case), 2 bad input (a flag, a file, a field), with one line saying which and what was expected,
// 3 an internal error (a bug in spmdsim: a broken invariant, reference/check.h).

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>

#include "cli/calibrate_command.h"
#include "cli/cases_command.h"
#include "cli/conform_command.h"
#include "cli/demo_command.h"
#include "cli/examples_command.h"
#include "cli/mpi_conform.h"
#include "cli/perf_command.h"
#include "cli/placement_flag.h"
#include "cli/plan_command.h"
#include "cli/run_command.h"
#include "cli/scale_command.h"
#include "cli/sharding_command.h"
#include "cli/train_command.h"
#include "cli/validate_command.h"
#include "reference/check.h"
#include "reference/error.h"

namespace {

// Every message the CLI prints is one line of readable length, whatever it quotes.
std::string one_line(std::string message) {
  constexpr std::size_t kMostChars = 2000;
  std::replace(message.begin(), message.end(), '\n', ' ');
  if (message.size() > kMostChars) {
    message = message.substr(0, kMostChars) + "... (" + std::to_string(message.size()) +
              " characters)";
  }
  return message;
}

// A decimal integer that fits the 64-bit type of its kind ("INT" or "UINT", CLI11's type names).
// CLI11 2.1 reads "-1" into an unsigned option as 2^64-1 and saturates values past the range.
bool fits_integer_option(const std::string& type_name, const std::string& text) {
  const char* end = text.data() + text.size();
  if (type_name.starts_with("UINT")) {
    std::uint64_t value = 0;
    const auto [stop, error] = std::from_chars(text.data(), end, value);
    return error == std::errc() && stop == end;
  }
  std::int64_t value = 0;
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && stop == end;
}

// Values CLI11 lets through that would run silently with something else: an empty value
// ("--algorithm ''", taken as "not given"), and integers past their type's range or negative
// for an unsigned option. None of spmdsim's flags, files or names can be empty.
void check_option_values(const CLI::App& app) {
  for (const CLI::App* command : app.get_subcommands()) {
    for (const CLI::Option* option : command->get_options()) {
      const std::string type_name = option->get_type_name();
      const bool integer = type_name.starts_with("INT") || type_name.starts_with("UINT");
      for (const std::string& value : option->results()) {
        if (value.empty()) {
          throw CLI::ValidationError(option->get_name(), "'' is empty, expected a value");
        }
        if (integer && !fits_integer_option(type_name, value)) {
          throw CLI::ValidationError(
              option->get_name(),
              value + ": expected a decimal integer from " +
                  (type_name.starts_with("UINT") ? std::string("0") : std::string("-2^63")) +
                  " to " + (type_name.starts_with("UINT") ? "2^64-1" : "2^63-1"));
        }
      }
    }
    check_option_values(*command);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "spmdsim: a deterministic simulator and reference implementation for SPMD programs "
      "(pmap, shard_map, lax collectives)"};
  app.require_subcommand(0, 1);

  spmd::ConformOptions conform_options;
  CLI::App* conform = app.add_subcommand(
      "conform", "Run conformance cases (JSON + .npy) and compare with JAX's outputs bit for bit");
  spmd::add_conform_flags(*conform, conform_options);

  spmd::CasesOptions cases_options;
  CLI::App* cases = app.add_subcommand(
      "cases",
      "Write order-sensitive conformance cases: psums whose data give other bits in every "
      "plausible wrong reduction order");
  spmd::add_cases_flags(*cases, cases_options);

  spmd::DemoOptions demo_options;
  CLI::App* demo = app.add_subcommand(
      "demo",
      "The default: data-parallel MLP training with pmap on 8 simulated devices of a "
      "ring, checked against the reference, with its costs and a trace");
  demo->add_option("--out", demo_options.out_folder, "Folder for the trace and reports")
      ->capture_default_str();
  demo->add_option("--steps", demo_options.steps, "Training steps")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  spmd::add_placement_flag(*demo, demo_options.placement);

  spmd::PerfOptions perf_options;
  CLI::App* perf = app.add_subcommand(
      "perf",
      "One collective over a range of sizes on a simulated machine, printed like "
      "nccl-tests (time, algbw, busbw)");
  spmd::add_perf_flags(*perf, perf_options);

  spmd::RunOptions run_options;
  CLI::App* run = app.add_subcommand(
      "run",
      "A built-in workload (MLP data parallel, transformer layer, collectives) on a "
      "machine; writes a trace and reports");
  spmd::add_run_flags(*run, run_options);

  spmd::ScaleOptions scale_options;
  CLI::App* scale = app.add_subcommand(
      "scale",
      "A workload at several device counts: a table and a PNG plot of step time, "
      "communication share, all-reduce busbw and memory per device");
  spmd::add_scale_flags(*scale, scale_options);

  spmd::ShardingOptions sharding_options;
  CLI::App* sharding = app.add_subcommand(
      "sharding",
      "Which device holds which block of an array under a mesh and a PartitionSpec, drawn as "
      "jax.debug.visualize_sharding draws it");
  spmd::add_sharding_flags(*sharding, sharding_options);

  spmd::ValidateOptions validate_options;
  CLI::App* validate = app.add_subcommand(
      "validate",
      "Predict every row of a calibration CSV (collectives timed on real machines) and print "
      "predicted vs measured per machine with the median and p90 of |error|");
  spmd::add_validate_flags(*validate, validate_options);

  spmd::TrainOptions train_options;
  CLI::App* train = app.add_subcommand(
      "train",
      "Predict one training step of a job (a training workload: model, layout, GPU, precision, "
      "software) with its range, its parts, tokens/s per GPU, MFU and memory per device");
  spmd::add_train_flags(*train, train_options);

  spmd::PlanOptions plan_options;
  CLI::App* plan = app.add_subcommand(
      "plan",
      "Search the parallel layouts of a training job (a model on N devices of a machine) and "
      "rank them by predicted tokens/s, with step time, MFU, memory and exposed communication");
  spmd::add_plan_flags(*plan, plan_options);

  spmd::CalibrateOptions calibrate_options;
  CLI::App* calibrate = app.add_subcommand(
      "calibrate",
      "Fit a GPU machine's launch and network latencies and efficiencies to nccl-tests or "
      "rccl-tests outputs measured on it, and write the machine file with them");
  spmd::add_calibrate_flags(*calibrate, calibrate_options);

  CLI::App* examples = app.add_subcommand(
      "examples",
      "Run the JAX tutorial examples (pmap, in_axes, psum, data-parallel training) "
      "on the reference backend and print their results");
  spmd::ExamplesOptions examples_options;
  spmd::add_examples_flags(*examples, examples_options);

  try {
    app.parse(argc, argv);
    check_option_values(app);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "error: " << one_line(e.what()) << " (see --help)\n";
    return 2;
  }
  try {
    if (conform->parsed()) {
      // Open MPI runs the command in every process, which prints and exits on its own terms.
      if (conform_options.backend == "mpi") {
        return spmd::run_mpi_conform_command(conform_options, std::cout, std::cerr);
      }
      return spmd::run_conform_command(conform_options, std::cout);
    }
    if (cases->parsed()) return spmd::run_cases_command(cases_options, std::cout);
    if (run->parsed()) return spmd::run_run_command(run_options, std::cout);
    if (scale->parsed()) return spmd::run_scale_command(scale_options, std::cout);
    if (sharding->parsed()) return spmd::run_sharding_command(sharding_options, std::cout);
    if (perf->parsed()) return spmd::run_perf_command(perf_options, std::cout);
    if (validate->parsed()) {
      return spmd::run_validate_command(validate_options, std::cout, std::cerr);
    }
    if (calibrate->parsed()) return spmd::run_calibrate_command(calibrate_options, std::cout);
    if (train->parsed()) return spmd::run_train_command(train_options, std::cout);
    if (plan->parsed()) return spmd::run_plan_command(plan_options, std::cout);
    if (examples->parsed()) return spmd::run_examples_command(std::cout, examples_options);
    return spmd::run_demo_command(demo_options, std::cout);
  } catch (const spmd::Error& e) {
    std::cerr << "error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const spmd::InternalError& e) {
    std::cerr << "spmdsim: internal error: " << one_line(e.what()) << "\n";
    return 3;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: this machine ran out of memory for the run (std::bad_alloc); expected "
                 "sizes it can hold: fewer devices, smaller shapes or fewer steps\n";
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    std::cerr << "error: " << one_line(e.what()) << "\n";  // a path the user gave
    return 2;
  } catch (const std::exception& e) {
    // Anything else is a bug in spmdsim: every bad input is meant to be an spmd::Error.
    std::cerr << "spmdsim: internal error: uncaught " << one_line(e.what()) << "\n";
    return 3;
  }
}
