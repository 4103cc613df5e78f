#include "cli/examples_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>

#include "examples/example_ops.h"
#include "examples/mlp.h"
#include "examples/numpy_str.h"
#include "examples/seed_examples.h"
#include "reference/error.h"
#include "reference/reference_backend.h"

namespace spmd {
namespace {

// Section headers name the tutorial (its number and section, docs/examples.md) and what the
// section shows; tests look for them.
// An example's output starts with its first header; `spmdsim examples` puts a blank line
// before each example, and an example with two sections one between them.
void section(std::ostream& out, const std::string& seed, const std::string& title) {
  out << fmt::format("=== [{}] {} ===\n", seed, title);
}

// Prints `label:` and the array on the next line(s), as the tutorials print arrays.
void show(std::ostream& out, const std::string& label, const Array& array) {
  out << label << ":\n" << numpy_str(array) << "\n";
}

void show_shape(std::ostream& out, const std::string& label, const Array& array) {
  out << label << ": " << shape_to_string(array.shape()) << "\n";
}

std::string yes_no(bool value) { return value ? "True" : "False"; }

void print_scale(std::ostream& out, Backend& backend) {
  section(out, "001 Aurora 1.2 §1", "pmap(scale, in_axes=(0, 0), axis_name='i') on 4 devices");
  const seeds::ScaleExample e = seeds::pmap_scale(backend);
  show(out, "Input sharded_x_data", e.x);
  show(out, "Input sharded_scale_factors_data", e.factors);
  show(out, "Pmap result (output from all devices stacked)", e.result);
  show_shape(out, "Result shape", e.result);
}

void print_in_out_axes(std::ostream& out, Backend& backend) {
  const seeds::InOutAxesExample e = seeds::pmap_in_out_axes(backend);
  section(out, "001 Aurora 1.2 §2-3",
          "reshape to a device axis; in_axes=(0, None) replicates "
          "a parameter (arange data instead of np.random.rand)");
  show_shape(out, "Global data shape", e.global_data);
  show_shape(out, "Shape after direct reshape", e.prepared);
  out << "Replicated param: " << numpy_str(e.param) << "\n";
  show(out, "Result from pmap, sum(data_shard * param, axis=0)", e.per_device_sums);
  show_shape(out, "Result shape", e.per_device_sums);

  out << '\n';
  section(out, "001 Aurora 1.2 §4",
          "out_axes=0 stacks per-device results, out_axes=None "
          "returns one copy");
  show(out, "Scalar results from each device (stacked by default out_axes=0)", e.scalar_sums);
  show_shape(out, "Shape", e.scalar_sums);
  show(out, "Identical result (out_axes=None)", e.identical);
  show_shape(out, "Shape", e.identical);
}

void print_devices_subset(std::ostream& out, Backend& backend) {
  const seeds::InOutAxesExample e = seeds::pmap_in_out_axes(backend);
  section(out, "001 Aurora 1.2 §6", "pmap with devices=[0, 1]: the first two rows of §3");
  show(out, "Result from pmap on subset of devices", e.subset_result);
  show_shape(out, "Result shape", e.subset_result);
}

// §5 and §7 run on §2's prepared (4, 8, 3) data.
Array prepared_data(Backend& backend) { return seeds::pmap_in_out_axes(backend).prepared; }

void print_static_argument(std::ostream& out, Backend& backend) {
  section(out, "001 Aurora 1.2 §5", "static_broadcasted_argnums=(1,) picks the branch per call");
  const seeds::StaticArgExample e = seeds::pmap_static_argument(backend, prepared_data(backend));
  show(out, "Result with static_val=7 (first element from each device)", e.with_7);
  show(out, "Result with static_val=3 (first element from each device)", e.with_3);
}

void print_collectives(std::ostream& out, Backend& backend) {
  section(out, "001 Aurora 1.2 §7",
          "psum, pmean and all_gather inside pmap (data sharded, "
          "weights replicated)");
  const seeds::CollectivesExample e = seeds::pmap_collectives(backend, prepared_data(backend));
  show(out, "Model weights (replicated)", e.weights);
  show_shape(out, "Shape of 'summed_res' (outer device dim from pmap)", e.summed);
  out << "summed_res replicas are identical: " << yes_no(replicas_bit_identical(e.summed)) << "\n";
  show(out, "Global sum, first batch item (summed_res[0, 0, :])", take(take(e.summed, 0, 0), 0, 0));
  show_shape(out, "Shape of 'mean_res'", e.mean);
  show(out, "mean_res (pmean of local_output[0, 0], one per device)", e.mean);
  show_shape(out, "Shape of 'gathered_res'", e.gathered);
  show(out, "All gathered rows as seen by device 0 (gathered_res[0])", take(e.gathered, 0, 0));
  out << "gathered_res replicas are identical: " << yes_no(replicas_bit_identical(e.gathered))
      << "\n";
}

void print_normalize(std::ostream& out, Backend& backend) {
  section(out, "jax.pmap docs / 001 §7",
          "normalization x / psum(x, 'i') and pmean over "
          "arange(4.)");
  const seeds::NormalizeExample e = seeds::pmap_normalize(backend);
  show(out, "x", e.x);
  show(out, "x / psum(x)", e.normalized);
  show(out, "pmean(x)", e.mean);
}

void print_axis_index(std::ostream& out, Backend& backend) {
  section(out, "002 pmap_basics Pattern 1",
          "lax.axis_index and device-specific computation "
          "x * (device_id + 1)");
  const seeds::AxisIndexExample e = seeds::pmap_axis_index(backend);
  show(out, "axis_index('i') on each device", e.indices);
  show(out, "Device-specific results (device ids passed in)", e.passed_ids);
  out << "Same with ids from axis_index: " << yes_no(e.passed_ids.bitwise_equal(e.from_axis_index))
      << "\n";
}

void print_reductions(std::ostream& out, Backend& backend) {
  section(out, "002 pmap_basics",
          "psum of local sums and counts (arange data instead of "
          "jax.random.normal), conditional per device");
  const seeds::ReductionExample e = seeds::pmap_sum_and_mean(backend);
  show(out, "Local sums", e.local_sum);
  out << "Global sum (all devices): " << numpy_str(take(e.global_sum, 0, 0)) << "\n";
  out << "Global count (all devices): " << numpy_str(take(e.global_count, 0, 0)) << "\n";
  out << "Global mean (all devices): " << numpy_str(take(e.global_mean, 0, 0)) << "\n";
  show(out, "Conditional results (sum * 2 on the lead device, mean elsewhere)",
       seeds::pmap_conditional(backend));
}

void print_pmean_gradients(std::ostream& out, Backend& backend) {
  section(out, "003 Data Parallelism with pmap", "pmean of three devices' gradients");
  show(out, "After pmean, one row per device", seeds::pmap_pmean_gradients(backend));
}

void print_distributed_docs(std::ostream& out, Backend& backend) {
  section(out, "004 Distributed JAX docs", "psum needs pmap's axis_name; ppermute swap");
  const seeds::UnboundAxisExample e = seeds::pmap_psum_axis_name(backend);
  out << "@jax.pmap without axis_name='i': error: " << e.error << "\n";
  show(out, "With axis_name='i', psum(arange(4.))", e.with_axis_name);
  show(out, "ppermute(x, 'devices', perm=[(0, 1), (1, 0)]) of x = arange(6.) as (2, 3)",
       seeds::pmap_ppermute_swap(backend));
}

void print_shard_map(std::ostream& out, Backend& backend) {
  section(out, "004 Distributed JAX docs",
          "shard_map on Mesh('x': 2, 'y': 4), in_specs=P('x', "
          "'y'), out_specs=P('x'), x_shard.sum(axis=1)");
  const seeds::ShardMapExample e = seeds::shard_map_row_sums(backend);
  show(out, "x", e.x);
  show(out, "Block shape on each device", e.block_shape);
  out << "As written (check_vma=True): error: " << e.error << "\n";
  show(out, "As written with check_vma=False (first 'y' device's partial sums)", e.unchecked);
  show(out, "With psum over 'y' (the row sums)", e.row_sums);
}

void print_training(std::ostream& out, Backend& backend) {
  const MlpConfig config;
  section(out, "000 Day 015 / 003 Data Parallelism",
          fmt::format("data-parallel MLP training with pmap on {} devices, grads and loss pmean'd",
                      config.devices));
  out << fmt::format(
      "MLP {} -> {} (relu) -> {}, batch {} sharded as ({}, {}, {}), learning rate {}\n",
      config.inputs, config.hidden, config.outputs, config.devices * config.samples_per_device,
      config.devices, config.samples_per_device, config.inputs,
      numpy_scalar_str(config.learning_rate));
  const TrainingRun run = train_data_parallel(backend, config);
  bool all_identical = true;
  for (const TrainingStep& step : run.steps) {
    out << fmt::format("step {:2}  loss {}\n", step.step, numpy_scalar_str(step.loss));
    all_identical = all_identical && step.replicas_identical;
  }
  out << "All " << config.devices
      << " replicas' parameters bit-identical after every step: " << yes_no(all_identical) << "\n";
}

struct Example {
  std::string_view name;
  std::string_view shows;  // for --list
  void (*print)(std::ostream& out, Backend& backend);
};

// In the order of the tutorials' sections; names follow the C++ functions of seed_examples.h.
constexpr Example kExamples[] = {
    {"pmap_scale", "001 §1: pmap(scale, in_axes=(0, 0)) on 4 devices", print_scale},
    {"pmap_in_out_axes", "001 §2-4: in_axes=(0, None) replicates a parameter; out_axes=0 / None",
     print_in_out_axes},
    {"pmap_static_argument", "001 §5: static_broadcasted_argnums picks the branch",
     print_static_argument},
    {"pmap_devices_subset", "001 §6: pmap with devices=[0, 1]", print_devices_subset},
    {"pmap_collectives", "001 §7: psum, pmean and all_gather inside pmap", print_collectives},
    {"pmap_normalize", "jax.pmap docs: x / psum(x, 'i') and pmean", print_normalize},
    {"pmap_axis_index", "002 Pattern 1: lax.axis_index, device-specific computation",
     print_axis_index},
    {"pmap_sum_and_mean", "002: psum of local sums and counts; conditional per device",
     print_reductions},
    {"pmap_pmean_gradients", "003: pmean of three devices' gradients", print_pmean_gradients},
    {"pmap_psum_axis_name", "004: psum needs pmap's axis_name; ppermute swap",
     print_distributed_docs},
    {"shard_map_row_sums", "004: shard_map row sums on a 2x4 mesh, check_vma", print_shard_map},
    {"mlp_training", "000 / 003: data-parallel MLP training, grads and loss pmean'd",
     print_training},
};

const Example& find_example(const std::string& name) {
  for (const Example& example : kExamples) {
    if (example.name == name) return example;
  }
  throw Error(fmt::format("examples {}: no such example, expected one of {} (see --list)", name,
                          fmt::join(example_names(), ", ")));
}

}  // namespace

std::vector<std::string_view> example_names() {
  std::vector<std::string_view> names;
  for (const Example& example : kExamples) names.push_back(example.name);
  return names;
}

void add_examples_flags(CLI::App& command, ExamplesOptions& options) {
  command.add_option("NAME", options.name, "Run only this example (see --list)");
  command.add_flag("--list", options.list, "Print the examples' names and what each shows");
}

int run_examples_command(std::ostream& out, const ExamplesOptions& options) {
  if (options.list) {
    for (const Example& example : kExamples) {
      out << fmt::format("{:<22}{}\n", example.name, example.shows);
    }
    return 0;
  }
  ReferenceBackend backend;
  if (!options.name.empty()) {
    find_example(options.name).print(out, backend);
    return 0;
  }
  out << "spmdsim examples: the worked examples of five JAX pmap / shard_map tutorials "
         "(docs/examples.md) on the reference backend\n";
  for (const Example& example : kExamples) {
    out << '\n';
    example.print(out, backend);
  }
  return 0;
}

}  // namespace spmd
