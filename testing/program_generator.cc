#include "testing/program_generator.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "reference/error.h"
#include "reference/reference_backend.h"

namespace spmd::testkit {
namespace {

// The type of `call`'s result on `operand`, as the reference computes it (all devices' results
// have one type): the next step's operand. A call the reference rejects raises spmd::Error, a
// bug in the generator.
Operand result_of(const Mesh& mesh, const Operand& operand, const CollectiveCall& call,
                  bool check_vma) {
  const Array zeros = Array(operand.dtype, operand.shape).with_varying_axes(operand.varying);
  const std::vector<Values> inputs(static_cast<std::size_t>(mesh.device_count()), Values{zeros});
  ReferenceBackend reference;
  const Array result =
      reference.run(mesh, inputs, collective_chain({call}, false), check_vma)[0][0];
  return {.dtype = result.dtype(), .shape = result.shape(), .varying = result.varying_axes()};
}

// Block dims: small ones, and the mesh's axis sizes and device count, which psum_scatter and
// all_to_all split without axis_index_groups.
Shape block_shape(const Mesh& mesh, std::int64_t max_dim) {
  std::vector<std::int64_t> dims;
  for (std::int64_t d = 1; d <= max_dim; ++d) dims.push_back(d);
  for (int size : mesh.shape()) dims.push_back(size);
  dims.push_back(mesh.device_count());
  const int rank = *rc::gen::inRange(0, 3);
  Shape shape;
  for (int d = 0; d < rank; ++d) shape.push_back(*rc::gen::elementOf(dims));
  return shape;
}

std::string type_words(DType dtype, const Shape& shape) {
  return std::string(dtype_name(dtype)) + shape_string(shape);
}

struct Chain {
  std::vector<CollectiveCall> steps;
  std::string description;  // one line per step
};

Chain draw_chain(const Mesh& mesh, Operand operand, bool check_vma, const ProgramOptions& options) {
  CollectiveCallOptions calls = options.calls;
  calls.check_vma = check_vma;
  Chain chain;
  const int count = *rc::gen::inRange(1, options.max_steps + 1);
  for (int k = 0; k < count; ++k) {
    const CollectiveCall call = *collective_call(mesh, operand, calls);
    operand = result_of(mesh, operand, call, check_vma);
    chain.description += fmt::format("\n  output {} = {} of {}: {}", k, call.to_string(),
                                     k == 0 ? "the input" : fmt::format("output {}", k - 1),
                                     type_words(operand.dtype, operand.shape));
    chain.steps.push_back(call);
  }
  return chain;
}

Program shard_map_program(const ProgramOptions& options) {
  const Mesh mesh = *testkit::mesh(1, options.max_axes, options.max_devices);
  const DType dtype = *dtype_of(options.dtypes);
  const Shape block = block_shape(mesh, options.max_block_dim);
  const PartitionSpec in_spec = *partition_spec(mesh, static_cast<int>(block.size()));
  const bool check_vma = *rc::gen::arbitrary<bool>();
  const std::uint64_t input_seed = *seed();
  const Operand operand{.dtype = dtype, .shape = block, .varying = in_spec.named_axes_mask(mesh)};
  const Chain chain = draw_chain(mesh, operand, check_vma, options);

  ShardMapOptions shard_map;
  shard_map.in_specs = {in_spec};
  const PartitionSpec stacked({SpecEntry(mesh.axis_names())});
  shard_map.out_specs.assign(chain.steps.size(), stacked);
  shard_map.check_vma = check_vma;
  const Array input =
      random_array(dtype, global_shape(block, in_spec, mesh), input_seed, options.data);
  std::string description = fmt::format(
      "shard_map on {} with check_vma={}\n  input: {} as {} (blocks {}), random_array seed {}{}"
      "\n  each output stacks every device's result on a new leading axis, out_specs {}",
      mesh.to_string(), check_vma ? "True" : "False", input.type_string(), in_spec.to_string(),
      type_words(dtype, block), input_seed, chain.description, stacked.to_string());
  return Program{.description = std::move(description),
                 .mesh = mesh,
                 .mapping = std::move(shard_map),
                 .function = collective_chain(chain.steps, /*leading_device_axis=*/true),
                 .inputs = {input}};
}

Program pmap_program(const ProgramOptions& options) {
  const Mesh mesh = *testkit::mesh(1, 1, options.max_devices);
  const DType dtype = *dtype_of(options.dtypes);
  const Shape block = block_shape(mesh, options.max_block_dim);
  const int in_axis = *rc::gen::inRange(0, static_cast<int>(block.size()) + 1);
  const std::uint64_t input_seed = *seed();
  const Operand operand{.dtype = dtype, .shape = block, .varying = 1};
  const Chain chain = draw_chain(mesh, operand, /*check_vma=*/false, options);

  PmapOptions pmap;
  pmap.axis_name = mesh.axis_names().front();
  pmap.in_axes = {in_axis};
  Shape global = block;
  global.insert(global.begin() + in_axis, mesh.device_count());
  const Array input = random_array(dtype, global, input_seed, options.data);
  std::string description = fmt::format(
      "pmap over axis '{}' of {} devices, in_axes=({},)\n  input: {}, random_array seed {}{}",
      pmap.axis_name, mesh.device_count(), in_axis, input.type_string(), input_seed,
      chain.description);
  return Program{.description = std::move(description),
                 .mesh = mesh,
                 .mapping = std::move(pmap),
                 .function = collective_chain(chain.steps, /*leading_device_axis=*/false),
                 .inputs = {input}};
}

}  // namespace

DeviceFunction collective_chain(std::vector<CollectiveCall> steps, bool leading_device_axis) {
  return [steps = std::move(steps), leading_device_axis](Context& ctx, const Values& args) {
    Array x = args.at(0);
    Values outputs;
    for (const CollectiveCall& step : steps) {
      x = step.op == CollectiveOp::axis_index ? ctx.axis_index(step.axes) : ctx.collective(step, x);
      outputs.push_back(leading_device_axis ? expand_dims(x, 0) : x);
    }
    return outputs;
  };
}

rc::Gen<Program> program(const ProgramOptions& options) {
  if (!options.shard_map && !options.pmap) {
    throw Error("ProgramOptions: shard_map and pmap are both false, expected at least one");
  }
  return rc::gen::exec([options] {
    const bool use_pmap =
        options.shard_map && options.pmap ? *rc::gen::arbitrary<bool>() : options.pmap;
    return use_pmap ? pmap_program(options) : shard_map_program(options);
  });
}

}  // namespace spmd::testkit
